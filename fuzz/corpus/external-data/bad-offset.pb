Bwj
locationweights.binj
offset-8p