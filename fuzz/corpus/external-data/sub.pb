Bwj
locationsub/weights.binp