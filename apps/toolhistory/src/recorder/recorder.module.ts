import { Module } from '@nestjs/common';
import { KafkaRecorderConsumer } from './kafka-recorder.consumer';

@Module({ providers: [KafkaRecorderConsumer] })
export class RecorderModule {}
