"""Importing this module installs the neural-tangents import hook
(:func:`ntkgap._infra.ntshim.install_hook`): the package root imports it, so a
later ``import neural_tangents`` in any process that imported ntkgap prepares
itself through the shim. It imports nothing heavy."""

from ntkgap._infra import ntshim

ntshim.install_hook()
