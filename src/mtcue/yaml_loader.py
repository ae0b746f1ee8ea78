"""The YAML loader of the project's own files (configs, the rehearsal's plan and slices): yaml.safe_load's,
refusing what safe_load accepts silently and a study would then get wrong or never finish reading.
"""
from __future__ import annotations

import math

import yaml

from mtcue.study import ConfigError

# Values a file may expand to through its aliases (config/paper.yaml: about 1,700): 700 bytes of aliases of
# aliases expand to billions, which validation would walk for hours.
MAX_YAML_VALUES = 100_000
YTE_SWITCH = "__use_yte__"  # Snakemake's switch for a config file that is a YTE template (Python in YAML)


def expanded_size(node: yaml.Node, sizes: dict[int, float]) -> float:
    """Values of `node` with every alias expanded (`sizes`: each node's, so each is counted once; an alias
    inside its own anchor is infinite)."""
    if id(node) not in sizes:
        sizes[id(node)] = math.inf  # until its children are counted
        children = ([n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else
                    node.value if isinstance(node, yaml.SequenceNode) else [])
        sizes[id(node)] = 1 + sum(expanded_size(n, sizes) for n in children)
    return sizes[id(node)]


class ConfigLoader(yaml.SafeLoader):
    """yaml.safe_load's loader, refusing with file, line and key:
    - a key written twice in one mapping: safe_load keeps the last value, so an overlooked earlier line would
      change the study unnoticed;
    - a key that is not text (`1:` is an integer, `on:` a boolean): as a name it would match neither "1" nor
      "on", and `1` and "1" would be two keys naming one run;
    - aliases expanding to more than MAX_YAML_VALUES values;
    - `__use_yte__`: Snakemake then reads the file as a YTE template, running the Python it holds."""

    def get_single_node(self):
        node = super().get_single_node()
        if node is not None and expanded_size(node, {}) > MAX_YAML_VALUES:
            raise ConfigError(f"{self.name}: its aliases (*name) expand to more than {MAX_YAML_VALUES:,} values; "
                              "write the repeated parts out or use fewer levels of aliases")
        return node

    def construct_mapping(self, node, deep=False):
        seen: dict[str, int] = {}  # key -> line
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *defaults` may be overridden key by key
                continue
            key, line = self.construct_object(key_node, deep=deep), key_node.start_mark.line + 1
            if not isinstance(key, str):
                raise ConfigError(f"{self.name}:{line}: key {key!r} is not text (YAML reads it as "
                                  f"{type(key).__name__}); write it in quotes to use it as a name")
            if key == YTE_SWITCH:
                raise ConfigError(f"{self.name}:{line}: {YTE_SWITCH} makes the file a YTE template, whose Python "
                                  "Snakemake runs as it reads the file; a config of the project is plain YAML: remove "
                                  "the key and write the values out")
            if key in seen:
                raise ConfigError(f"{self.name}:{line}: key {key!r} is written twice in one mapping (first on "
                                  f"line {seen[key]}); keep one")
            seen[key] = line
        return super().construct_mapping(node, deep)
