"""fairseq `--user-dir` plugin for MTCue: task `contextual_translation`; models/archs `mtcue` and the
contextual baselines `tagging` and `novotney_cue` (BASE and BASE-PM are fairseq's `transformer`);
Voita et al.'s (2018) `voita_context` and `concat`, which read a token store; the sequence-shortening
models (`caching_tokens`, `caching_sentence`, `pool_mean`, `pool_max`, `pool_linear`, `grouping`,
`selecting`, `multi_encoder`; shortening_base), which read several of its slots; Hoang et al.'s
side-information models `si_*` (with the criterion `label_smoothed_cross_entropy_mtl`); Jeong et al.'s style
control `style_token` and `style_dim` (task `style_translation`); exact resumption of
fairseq-train (`resume`).

Use with any fairseq command: `--user-dir src/mtcue/models/plugin`, or `import mtcue.models.plugin`.
"""
import importlib
import os
import sys

if __name__ == "mtcue.models.plugin":
    from mtcue.models.checkpoints import allow_checkpoint_types

    # fairseq's own loads (resuming fairseq-train, load_model_ensemble) use torch.load's default,
    # weights_only since torch 2.6: they read our checkpoints' argparse.Namespace and refuse code.
    allow_checkpoint_types()
    from . import (  # noqa: F401  (register with fairseq)
        caching_sentence_model,
        caching_tokens_model,
        concat_model,
        grouping_model,
        mtcue_model,
        multi_encoder_model,
        mtl_criterion,
        novotney_cue_model,
        pool_linear_model,
        pool_max_model,
        pool_mean_model,
        resume,
        selecting_model,
        si_mtl_model,
        si_output_layer_model,
        si_source_model,
        si_target_prefix_model,
        style_dim_model,
        style_task,
        style_token_model,
        tagging_model,
        task,
        voita_context_model,
    )
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
