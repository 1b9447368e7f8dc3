import { Module } from '@nestjs/common';
import { ReadModelProjectorService } from '../projector/read-model-projector.service';
import { KafkaRecorderConsumer } from './kafka-recorder.consumer';

@Module({ providers: [KafkaRecorderConsumer, ReadModelProjectorService] })
export class RecorderModule {}
