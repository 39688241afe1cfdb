"""The pure decision engine: plain data in, a Decision out, time passed in (docs/engine.md)."""
