"""The interactive lab (needs the `[lab]` extra): settings, a runner, the widget view, figures."""
