"""The providers: one module per wire (OpenAI SDK, plain HTTP, litellm) and the scripted
test backend."""
