"""The agents' prompt history (history.db): read it safely while the agent writes, search it, write a demo one."""
