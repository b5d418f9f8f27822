:Bwj
locationweights.binj
offset24p