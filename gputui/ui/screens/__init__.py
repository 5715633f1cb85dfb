"""gputui.ui.screens."""
