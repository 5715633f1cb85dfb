"""gputui.sim package."""
