#!/usr/bin/env python3
"""Checks that every file llmprof left under a directory is whole, whatever stopped the writer.

Usage: check_files.py DIR [DIR...]   (each a run directory, a sweep directory or a parent of them)

- Files written whole (tmp + rename): *.json, config.yaml, and the tables written at the end
  (sweep.csv, ops.csv, modules.csv, activations.csv, memory.csv, kernels.csv, power.csv) are
  absent or complete: JSON and YAML parse, a CSV ends with a newline and every row has the
  header's field count.
- Files appended row by row (steps.csv, eval.csv): every row ending in a newline has the header's
  field count, its numbers parse, and steps count 1, 2, 3, ...; only a last line without its
  newline (a row cut short by a kill) may be partial.
- Temporaries (*.tmp) are ignored: readers never open them and the next write replaces them.
Prints one line per directory; exits 1 naming the first broken file and line.
"""
import csv
import io
import json
import os
import sys

import yaml

APPENDED = {"steps.csv", "eval.csv"}
TEXT_COLUMNS = {"split", "energy_estimated"}


class Broken(Exception):
    pass


def rows_of(path, text):
    rows = list(csv.reader(io.StringIO(text, newline="")))
    if not rows:
        raise Broken(f"{path}: no header")
    return rows


def check_csv(path, appended):
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    if text == "":
        if appended:
            return 0  # created, nothing landed yet
        raise Broken(f"{path}: empty, yet written whole")
    whole = text.endswith("\n")
    if not whole:
        if not appended:
            raise Broken(f"{path}: no newline at its end, yet written whole")
        text = text[: text.rfind("\n") + 1]  # the partial last line is left out, as readers do
        if text == "":
            return 0
    rows = rows_of(path, text)
    header = rows[0]
    for i, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise Broken(f"{path} line {i}: {len(row)} fields, the header has {len(header)}")
    if os.path.basename(path) == "steps.csv":
        for i, row in enumerate(rows[1:], start=1):
            if row[0] != str(i):
                raise Broken(f"{path} line {i + 1}: step '{row[0]}', expected {i}")
            for name, value in zip(header, row):
                if value == "" or name in TEXT_COLUMNS:
                    continue
                try:
                    float(value)
                except ValueError:
                    raise Broken(f"{path} line {i + 1}: {name} '{value}' is not a number")
    return len(rows) - 1


def check_file(path):
    name = os.path.basename(path)
    if name.endswith(".tmp"):
        return None
    if name.endswith(".json"):
        with open(path, encoding="utf-8") as f:
            try:
                json.load(f)
            except ValueError as e:
                raise Broken(f"{path}: not whole JSON ({e})")
        return None
    if name == "config.yaml":
        with open(path, encoding="utf-8") as f:
            try:
                doc = yaml.safe_load(f)
            except yaml.YAMLError as e:
                raise Broken(f"{path}: not whole YAML ({e})")
        if not isinstance(doc, dict):
            raise Broken(f"{path}: not a mapping (empty or cut short)")
        return None
    if name.endswith(".csv"):
        return check_csv(path, name in APPENDED)
    return None


def main():
    status = 0
    for top in sys.argv[1:]:
        files = rows = 0
        try:
            for root, dirs, names in os.walk(top):
                # A checkpoint's model.pt is LibTorch's; its directory appears by rename only.
                for name in sorted(names):
                    n = check_file(os.path.join(root, name))
                    files += 1
                    rows += n or 0
            print(f"whole: {top}: {files} files, {rows} csv rows")
        except Broken as e:
            print(f"BROKEN: {e}")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
