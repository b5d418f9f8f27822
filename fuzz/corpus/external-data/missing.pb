Bwj
locationmissing.binp