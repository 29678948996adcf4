"""The sqlite response cache every model call goes through, and what a cache file is."""
