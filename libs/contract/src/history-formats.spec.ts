import { HistoryFormat as ProtoHistoryFormat } from '../../grpc-api/src/generated/toolhistory/v1/toolhistory';
import { HISTORY_FORMAT_LIST, HISTORY_FORMATS } from './history-formats';

describe('the history formats, declared once', () => {
  it('has one row per format of the gRPC API, each name once', () => {
    const proto = Object.keys(ProtoHistoryFormat).filter(
      (name) => name.startsWith('HISTORY_FORMAT_') && name !== 'HISTORY_FORMAT_UNSPECIFIED',
    );
    expect(HISTORY_FORMAT_LIST.map((format) => HISTORY_FORMATS[format].proto).sort()).toEqual([...new Set(proto)].sort());
    expect(new Set(HISTORY_FORMAT_LIST.map((format) => HISTORY_FORMATS[format].client)).size).toBe(HISTORY_FORMAT_LIST.length);
  });
});
