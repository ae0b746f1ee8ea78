"""fairseq `--user-dir` plugin: one subfolder per model family, the shared infrastructure beside them.

- `mtcue/`: MTCue (`mtcue`) and its contextual baselines `tagging` and `novotney_cue` (BASE and BASE-PM
  are fairseq's `transformer`), with MTCue's parallel cross-attention;
- `voita/`: Voita et al.'s (2018) `voita_context` and `concat`, which read a token store;
- `shortening/`: the sequence-shortening models (`caching_tokens`, `caching_sentence`, `pool_mean`,
  `pool_max`, `pool_linear`, `grouping`, `selecting`, `multi_encoder`; `shortening_base`, `shorteners`),
  which read several of its slots;
- `side_information/`: Hoang et al.'s side-information models `si_*` (with the criterion
  `label_smoothed_cross_entropy_mtl`);
- `style/`: Jeong et al.'s style control `style_token` and `style_dim` (task `style_translation`);
- here: the task `contextual_translation` and its datasets (`task`, `context_dataset`), what the
  context-reading models share (`contextual_model`, `context_encoder`, `qk_norm_attention`,
  `scaled_embedding`), initialisation from a trained model (`pretrained`) and exact resumption of
  fairseq-train (`resume`).

Every module below this folder is imported (and so registered with fairseq) on import: a new model file
needs no line here. Checkpoints name their task, model and criterion by their registered names, never
by module path, so moving a file does not break a trained model.

Use with any fairseq command: `--user-dir src/mtcue/models/plugin`, or `import mtcue.models.plugin`.
"""
import importlib
import os
import sys

if __name__ == "mtcue.models.plugin":
    import pkgutil

    from mtcue.models.checkpoints import allow_checkpoint_types

    # fairseq's own loads (resuming fairseq-train, load_model_ensemble) use torch.load's default,
    # weights_only since torch 2.6: they read our checkpoints' argparse.Namespace and refuse code.
    allow_checkpoint_types()
    # Register every task, model, architecture and criterion with fairseq, in name order.
    for _module in pkgutil.walk_packages(__path__, prefix=f"{__name__}."):
        importlib.import_module(_module.name)
else:
    # fairseq imports --user-dir as a top-level module named after the directory ("plugin").
    # Registering the task and model from a second copy of these files would fail, so this name
    # becomes an alias of the package imported under its real name.
    # .../src/mtcue/models/plugin/__init__.py -> .../src
    _src = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    if _src not in sys.path:
        sys.path.append(_src)
    _package = importlib.import_module("mtcue.models.plugin")
    if os.path.realpath(_package.__file__) != os.path.realpath(__file__):
        raise ImportError(f"--user-dir {os.path.dirname(__file__)} is not the installed mtcue.models.plugin "
                          f"({os.path.dirname(_package.__file__)})")
    sys.modules[__name__] = _package
    # fairseq put src/mtcue/models on sys.path to import this directory; drop it again so that
    # mtcue's modules (train, translate, params, ...) cannot shadow top-level packages of that name.
    _here = os.path.realpath(os.path.dirname(os.path.dirname(__file__)))
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != _here]
