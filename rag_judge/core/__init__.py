"""The floor every other one builds on: errors, language, statistics and the core types."""
