"""Figures: the results' plots, the lessons' own figures, the memory trade-off of fit."""
