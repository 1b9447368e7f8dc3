// Tests against real services wait on brokers and consumer groups: seconds, not milliseconds.
jest.setTimeout(120_000);
