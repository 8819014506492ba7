"""The commands of `skillpack`, one module per family (`skillpack.cli.app.COMMANDS`)."""
