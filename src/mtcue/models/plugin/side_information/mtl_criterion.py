"""Criterion `label_smoothed_cross_entropy_mtl`: fairseq's label-smoothed cross-entropy plus lambda times
the auxiliary loss a model returns in its output's extra dict (`auxiliary_loss`): si_mtl's multi-label
classification loss (Hoang et al.'s L = L_NMT + lambda L_MLC), si_trg_prefix's label-prefix loss (weight 1).
The auxiliary loss is logged per sentence.

No `from __future__ import annotations` here: fairseq builds the command line from the config dataclass's
field types, which must be types, not strings."""
from dataclasses import dataclass, field

from fairseq import metrics
from fairseq.criterions import register_criterion
from fairseq.criterions.label_smoothed_cross_entropy import (
    LabelSmoothedCrossEntropyCriterion,
    LabelSmoothedCrossEntropyCriterionConfig,
)


@dataclass
class MultiTaskCriterionConfig(LabelSmoothedCrossEntropyCriterionConfig):
    mtl_weight: float = field(default=0.1, metadata={"help": "lambda: the weight of the model's auxiliary loss"})


@register_criterion("label_smoothed_cross_entropy_mtl", dataclass=MultiTaskCriterionConfig)
class MultiTaskCriterion(LabelSmoothedCrossEntropyCriterion):
    def __init__(self, task, sentence_avg, label_smoothing, mtl_weight, ignore_prefix_size=0, report_accuracy=False):
        super().__init__(task, sentence_avg, label_smoothing, ignore_prefix_size, report_accuracy)
        self.mtl_weight = mtl_weight

    def forward(self, model, sample, reduce=True):
        net_output = model(**sample["net_input"])
        loss, nll_loss = self.compute_loss(model, net_output, sample, reduce=reduce)
        auxiliary = net_output[1]["auxiliary_loss"]
        loss = loss + self.mtl_weight * auxiliary
        sample_size = sample["target"].size(0) if self.sentence_avg else sample["ntokens"]
        logging_output = {"loss": loss.data, "nll_loss": nll_loss.data, "auxiliary_loss": auxiliary.data,
                          "ntokens": sample["ntokens"], "nsentences": sample["target"].size(0),
                          "sample_size": sample_size}
        return loss, sample_size, logging_output

    @classmethod
    def reduce_metrics(cls, logging_outputs) -> None:
        super().reduce_metrics(logging_outputs)
        total = sum(log.get("auxiliary_loss", 0) for log in logging_outputs)
        sentences = sum(log.get("nsentences", 0) for log in logging_outputs)
        metrics.log_scalar("auxiliary_loss", total / max(sentences, 1), sentences, round=3)
