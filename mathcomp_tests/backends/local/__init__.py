"""Backends that run the model in this process (transformers, the sympy reference), and what they read
from a model folder: its weights, its tokenizer's decisions, the folders the project prepares."""
