"""The self-adjusting classifier in the Linux XDP datapath: ``superlinear xdp`` and ``xdp-bench``."""
