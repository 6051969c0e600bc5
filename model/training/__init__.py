"""Making a model: the corpus generator, training (one process or torchrun), presets, the recipe
comparison and the evaluation of a trained checkpoint and its snapshots."""
