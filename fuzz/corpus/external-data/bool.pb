	Bwj
locationweights.binj
offset100j
length16p