Bwj
location../secret.binp