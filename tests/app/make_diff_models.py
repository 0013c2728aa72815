"""Makes the models the diff tests compare: torchvision models that nobody wrote for tdfx.

  resnet18.pt            resnet18, random weights (seed 0)
  resnet18_finetuned.pt  the same, with one conv's weight and one norm's running_mean changed
  resnet34_grown.pt      resnet34 holding resnet18's weights wherever the names agree, so only
                         its added blocks are new

And small ones a diff once called identical though they differ (issue 35, finding 4):

  int64_2p53.pt, int64_2p53_plus1.pt   an int64 buffer holding 2^53 and 2^53 + 1 (equal as doubles)
  complex.pt                           a complex64 parameter (its self-diff said "values not read")
  float64_one.pt, float64_one_ulp.pt   a float64 buffer holding 1 and 1 + 2^-52 (equal as float32,
                                       the width other floating values cross the worker's socket in)
  float16_a.pt, float16_b.pt           a float16 parameter, 1 element apart by 2^-10
  qlstm_0.pt, qlstm_1.pt               an LSTM and a Linear quantized dynamically (seeds 0 and 1): their
                                       weights are packed objects, not parameters (a diff said
                                       "identical", issue 57, I)
  dotted_2.pt, dotted_10.pt            a root parameter literally named "a.b" (2 or 10) beside
                                       submodule a's b (10): named_parameters names both "a.b"

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


class Int64Offset(torch.nn.Module):
    def __init__(self, value):
        super().__init__()
        self.register_buffer("offset", torch.tensor([value], dtype=torch.int64))

    def forward(self, x):
        return x + self.offset


class Float64Offset(torch.nn.Module):
    def __init__(self, value):
        super().__init__()
        self.register_buffer("offset", torch.tensor([value, -2.0], dtype=torch.float64))

    def forward(self, x):
        return x + self.offset


class HalfScale(torch.nn.Module):
    def __init__(self, last):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.tensor([0.5, 3.0, last], dtype=torch.float16))

    def forward(self, x):
        return x * self.scale


class LstmHead(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(8, 16, batch_first=True)
        self.fc = torch.nn.Linear(16, 4)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.fc(y)


def quantized_lstm(seed):
    torch.manual_seed(seed)
    return torch.quantization.quantize_dynamic(LstmHead().eval(), {torch.nn.LSTM, torch.nn.Linear}, dtype=torch.qint8)


class ComplexScale(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.tensor([1.5 + 2j, -0.5 + 0.25j], dtype=torch.complex64))

    def forward(self, x):
        return (x * self.scale).real


class Inner(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.b = torch.nn.Parameter(torch.full((3,), 10.0))


class DottedName(torch.nn.Module):
    """Only a crafted archive has a parameter named "a.b" (torch.nn refuses the name; its dict does not)."""

    def __init__(self, value):
        super().__init__()
        self.a = Inner()
        self._parameters["a.b"] = torch.nn.Parameter(torch.full((3,), value))

    def forward(self, x):
        return x * self.a.b


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
    save(Int64Offset(2 ** 53), os.path.join(out, "int64_2p53.pt"))
    save(Int64Offset(2 ** 53 + 1), os.path.join(out, "int64_2p53_plus1.pt"))
    save(ComplexScale(), os.path.join(out, "complex.pt"))
    save(Float64Offset(1.0), os.path.join(out, "float64_one.pt"))
    save(Float64Offset(1.0 + 2.0 ** -52), os.path.join(out, "float64_one_ulp.pt"))
    save(HalfScale(1.0), os.path.join(out, "float16_a.pt"))
    save(HalfScale(1.0 + 2.0 ** -10), os.path.join(out, "float16_b.pt"))
    save(quantized_lstm(0), os.path.join(out, "qlstm_0.pt"))
    save(quantized_lstm(1), os.path.join(out, "qlstm_1.pt"))
    save(DottedName(2.0), os.path.join(out, "dotted_2.pt"))
    save(DottedName(10.0), os.path.join(out, "dotted_10.pt"))


if __name__ == "__main__":
    main()
