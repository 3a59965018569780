"""Spectral analysis of functions: the Walsh (hypercube) and Fourier (circle)
transforms and the complexity measures read from a spectrum. The bottom of
the data flow: imports nothing from the rest of ntkgap but ``errors``."""
