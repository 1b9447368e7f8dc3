import { Module } from '@nestjs/common';
import { ReadModelProjectorService } from '../projector/read-model-projector.service';
import { KafkaRecorderConsumer } from './kafka-recorder.consumer';
import { RecordingActivity } from './recording-activity';

@Module({ providers: [RecordingActivity, KafkaRecorderConsumer, ReadModelProjectorService] })
export class RecorderModule {}
