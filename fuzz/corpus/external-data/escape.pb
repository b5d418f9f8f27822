Bwj
location
escape.binp