import { AppError, ErrorCode } from '@toolhistory/errors';

/** sysexits(3): what scripts and supervisors read from an exit status. */
export const EXIT = {
  OK: 0,
  USAGE: 64,
  DATAERR: 65,
  NOINPUT: 66,
  UNAVAILABLE: 69,
  SOFTWARE: 70,
  TEMPFAIL: 75,
  NOPERM: 77,
  CONFIG: 78,
} as const;

/** The exit status for a failure, by its classification: a retriable one is worth trying again (TEMPFAIL). */
export function exitCodeOf(error: unknown): number {
  if (!(error instanceof AppError)) return EXIT.SOFTWARE;
  switch (error.code) {
    case ErrorCode.InvalidConfig:
      return EXIT.CONFIG;
    case ErrorCode.InvalidArgument:
      return EXIT.USAGE;
    case ErrorCode.AlreadyExists:
      return EXIT.DATAERR;
    case ErrorCode.NotFound:
      return EXIT.NOINPUT;
    case ErrorCode.PermissionDenied:
    case ErrorCode.Unauthenticated:
      return EXIT.NOPERM;
    default:
      return error.retriable ? EXIT.TEMPFAIL : EXIT.SOFTWARE;
  }
}
