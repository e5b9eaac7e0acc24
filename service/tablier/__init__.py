"""tablier: an event-sourced game server for turn-based card and tile games."""
