"""The embedded model: packaged weights, llama.cpp in process and as a server, the AMX guard,
local embedders."""
