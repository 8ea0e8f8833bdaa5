"""The FastAPI app, websocket fan-out, overlay/console/spectator pages and the journal store."""
