"""The odek store: session files, their index and audit logs, and odek's tool-output framing."""
