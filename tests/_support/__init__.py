"""Helpers shared by the tests: corpus streams, provider event builders, batch logs, CLI
runs, fuzz inputs, request validators (each module says what it holds)."""
