#!/usr/bin/env python3
"""Scripts torchvision 0.14 classification models into TorchScript archives for tdfx's zoo tests.

Run with Debian's interpreter: /usr/bin/python3 make_zoo.py --out DIR [NAME ...]
Models already in DIR are kept (DIR is a cache; the files are large and never committed).
Weights are random (seeded): nothing is downloaded.
"""
import argparse
import os
import sys
import warnings

# Residual, depthwise/mobile, densely connected, squeeze/shuffle/NAS CNNs, plain stacks, four
# transformers, and the two whose scripted forward returns a NamedTuple with None outputs
# (googlenet, inception_v3).
ZOO = [
    "resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small", "densenet121", "efficientnet_b0",
    "shufflenet_v2_x0_5", "squeezenet1_1", "regnet_y_400mf", "mnasnet0_5",
    "vit_b_16", "swin_t", "convnext_tiny", "maxvit_t",
    "googlenet", "inception_v3", "alexnet", "vgg11", "resnext50_32x4d", "efficientnet_v2_s", "mobilenet_v3_large",
]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", required=True)
    parser.add_argument("--list", action="store_true", help="print the zoo's model names and exit")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    if args.list:
        print(" ".join(ZOO))
        return 0
    # Imported here: --list runs at every CMake configure and needs neither.
    import torch
    import torchvision

    os.makedirs(args.out, exist_ok=True)
    warnings.filterwarnings("ignore")
    for name in args.names or ZOO:
        path = os.path.join(args.out, f"{name}.pt")
        if os.path.exists(path):
            continue
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)(weights=None).eval()
        tmp = path + ".tmp"
        torch.jit.script(model).save(tmp)
        os.replace(tmp, path)  # a killed run never leaves a half-written model in the cache
        print(f"scripted {name}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
