"""The engine's in-memory vocabulary: states, the request context, a live stack with one
slot per resource, and its outputs. No I/O, and nothing from the rest of the engine."""
