"""Unit tests: pure logic, no broker and no service."""
