"""DASH content preparation (FFmpeg) and the nginx server."""
