"""Task `contextual_translation`: translation whose batches carry context vectors from a store."""
# No `from __future__ import annotations` here: fairseq builds argparse options from the real field types.
from dataclasses import dataclass, field
from typing import Optional

from fairseq.tasks import register_task
from fairseq.tasks.translation import TranslationConfig, TranslationTask

from mtcue.context.store import ContextStore
from mtcue.context.token_store import open_store

from .context_dataset import ContextDataset, TokenContextDataset
from .pretrained import FromCheckpoint


@dataclass
class ContextualTranslationConfig(TranslationConfig):
    context_dir: Optional[str] = field(
        default=None,
        metadata={"help": "context embedding store of this direction (docs/formats.md section 2); "
                          "split S is read from S.index.npy"},
    )
    context_columns: Optional[str] = field(
        default=None,
        metadata={"help": "comma-separated store columns to feed the model (default: all), e.g. for the "
                          "no-metadata / no-document-context ablations"},
    )
    random_context: Optional[str] = field(
        default=None,
        metadata={"help": "random-context ablations: 'noise' replaces every present context vector by "
                          "N(0, 0.1^2) noise (the paper's); 'shuffle' gives each sample the context row of "
                          "another sample of its split (a random derangement), both redrawn per epoch from "
                          "--random-context-seed; 'drop' removes every context (test time)"},
    )
    context_slot: str = field(
        default="prev1",
        metadata={"help": "token store (docs/formats.md section 2): the slot the model reads, e.g. prev1 "
                          "(the previous sentence) or next1; several, comma-separated (prev1,prev2: the "
                          "shortening models' context sentences, nearest first), give [B, c, L] batches"},
    )
    random_context_seed: int = field(default=1, metadata={"help": "seed of --random-context's draws"})
    no_context_marker: bool = field(
        default=False,
        metadata={"help": "token store: a context sentence is `tokens </s>` as a source sentence (the sequence-"
                          "shortening family, as its authors' code), not `<s> tokens </s>` (Voita et al.'s marker)"},
    )


@register_task("contextual_translation", dataclass=ContextualTranslationConfig)
class ContextualTranslationTask(FromCheckpoint, TranslationTask):
    """Exposes to the model, all read from the store's manifest: `context_kind` ("vectors" or "tags"),
    `context_dim` (vector width; None for tags), `n_tags` (tag vocabulary size; None for vectors),
    `n_columns` (context sequence length) and `doc_columns` (how many leading columns are document slots).
    A token store (`context_kind` "tokens") gives one slot (--context-slot) as a token sequence."""

    def __init__(self, cfg: ContextualTranslationConfig, src_dict, tgt_dict, store: Optional[ContextStore] = None):
        """`store`: an in-memory store (mtcue.Translator) instead of --context-dir's."""
        super().__init__(cfg, src_dict, tgt_dict)
        if store is None and not cfg.context_dir:
            raise ValueError("--task contextual_translation needs --context-dir (a context embedding store)")
        self.store = store or open_store(cfg.context_dir)
        if self.store.kind == "tokens":
            self.column_ids = [self.store.slot(s.strip()) for s in cfg.context_slot.split(",")]
            self.doc_columns = 0
            self.context_kind, self.context_dim, self.n_tags = "tokens", None, None
            self.n_columns = len(self.column_ids)
            return
        names = [c.strip() for c in cfg.context_columns.split(",") if c.strip()] if cfg.context_columns else None
        self.column_ids, self.doc_columns = self.store.select_columns(names)
        self.context_kind, self.context_dim, self.n_tags = self.store.kind, self.store.dim, self.store.n_tags
        self.n_columns = len(self.column_ids)

    def load_dataset(self, split, epoch=1, combine=False, **kwargs):
        # fairseq-generate passes the checkpoint's task config as task_cfg; the store given on this
        # command line (self.cfg) is the one to read.
        super().load_dataset(split, epoch=epoch, combine=combine, **kwargs)
        if self.context_kind == "tokens":
            self.datasets[split] = self.with_tokens(self.datasets[split], *self.store.split(split),
                                                    name=str(self.store.dir / f"{split}.offsets.npy"))
            return
        self.datasets[split] = self.with_context(self.datasets[split], self.store.index(split), self.store.vectors,
                                                 str(self.store.dir / f"{split}.index.npy"))

    def with_context(self, dataset, index, vectors, name: str) -> ContextDataset:
        """`dataset` whose batches carry the context of `index` (the store's columns) in this task's columns."""
        columns = None if self.column_ids == list(range(len(self.store.columns))) else self.column_ids
        return ContextDataset(dataset, index, vectors, columns, name=name, random=self.cfg.random_context,
                              random_seed=self.cfg.random_context_seed)

    def with_tokens(self, dataset, tokens, offsets, name: str) -> TokenContextDataset:
        """`dataset` whose batches carry this task's token-store slot; the marker starting each context
        sentence (unless --no-context-marker) is the dictionary's <s>, which fairseq never puts on the
        source side (so BASE's embedding matrix fits unchanged)."""
        if self.cfg.random_context not in (None, "shuffle"):
            raise ValueError(f"--random-context {self.cfg.random_context}: a token store has no vectors to replace; "
                             "use shuffle (another sample's line)")
        d = self.src_dict
        seed = self.cfg.random_context_seed if self.cfg.random_context else None
        slot = self.column_ids[0] if len(self.column_ids) == 1 else self.column_ids
        marker = None if self.cfg.no_context_marker else d.bos()
        return TokenContextDataset(dataset, tokens, offsets, slot, marker, d.eos(), d.pad(), name=name,
                                   random_seed=seed)
