"""The bundled demo sessions, written as code: python -m tools.demo writes sitegen/demo/pi."""
