"""Makes the models the diff tests compare: torchvision models that nobody wrote for tdfx.

  resnet18.pt            resnet18, random weights (seed 0)
  resnet18_finetuned.pt  the same, with one conv's weight and one norm's running_mean changed
  resnet34_grown.pt      resnet34 holding resnet18's weights wherever the names agree, so only
                         its added blocks are new

Usage: make_diff_models.py DIR (files already in DIR are kept: it is a cache).
"""
import os
import sys

import torch
import torchvision


def save(module, path):
    if os.path.exists(path):
        return
    tmp = path + ".tmp"
    torch.jit.script(module.eval()).save(tmp)
    os.replace(tmp, path)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    r18 = torchvision.models.resnet18()
    save(r18, os.path.join(out, "resnet18.pt"))
    tuned = torchvision.models.resnet18()
    tuned.load_state_dict(r18.state_dict())
    with torch.no_grad():
        tuned.layer2[1].conv2.weight[0, 0, 0, 0] += 0.25
        tuned.layer3[0].bn1.running_mean[3] -= 0.5
    save(tuned, os.path.join(out, "resnet18_finetuned.pt"))
    r34 = torchvision.models.resnet34()
    missing, unexpected = r34.load_state_dict(r18.state_dict(), strict=False)
    assert not unexpected, unexpected
    save(r34, os.path.join(out, "resnet34_grown.pt"))


if __name__ == "__main__":
    main()
