/**
 * A bare grpc-js server for `bench/http2-storm.ts`: no NestJS, no database,
 * one unary method answering ~94 KB after a short wait (a replay's size),
 * with the HTTP/2 options the service uses unless STORM_SERVER_OPTIONS
 * (JSON of grpc-js server options) says otherwise. Prints its port, then
 * each session error, so a storm shows what the server saw.
 */
import * as grpc from '@grpc/grpc-js';

const ANSWER = Buffer.alloc(94 * 1024, 'x');

const options = JSON.parse(process.env.STORM_SERVER_OPTIONS ?? '{}') as grpc.ServerOptions;
const server = new grpc.Server(options);
let answered = 0;
let cancelled = 0;
server.addService(
  {
    Replay: {
      path: '/storm.Storm/Replay',
      requestStream: false,
      responseStream: false,
      requestSerialize: (b: Buffer) => b,
      requestDeserialize: (b: Buffer) => b,
      responseSerialize: (b: Buffer) => b,
      responseDeserialize: (b: Buffer) => b,
    },
  },
  {
    Replay: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
      let done = false;
      // grpc-js also says 'cancelled' once a call has ended: only a cancel before the answer counts.
      call.on('cancelled', () => {
        if (!done) cancelled += 1;
        done = true;
      });
      // An answer a moment later, as a database read would give it: streams are open when resets arrive.
      setTimeout(
        () => {
          if (done) return;
          done = true;
          answered += 1;
          callback(null, ANSWER);
        },
        Number(process.env.STORM_ANSWER_DELAY_MS ?? 2),
      );
    },
  },
);
server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, port) => {
  if (error) throw error;
  console.log(`port ${port}`);
});
setInterval(() => console.log(`answered ${answered} cancelled ${cancelled}`), 1_000).unref();
