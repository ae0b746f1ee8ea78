import logging
from types import SimpleNamespace

import pandas as pd
import pytest

from mtcue.language_check import WORDS, guess_language, other_language
from mtcue.models import translate_text as translate_text_module
from mtcue.models.translator import Translator


@pytest.mark.parametrize("text, language", [
    ("Hast du den Brief gesehen?", "de"), ("Sind Sie bereit?", "de"), ("Wo warst du gestern?", "de"),
    ("Did you see the letter?", "en"), ("Where were you yesterday?", "en"), ("Are you ready?", "en"),
    ("Vous êtes prêt ?", "fr"), ("Czy jesteś gotowy?", "pl"), ("Где ты был вчера?", "ru"),
    # too few telling words, or a tie: no guess
    ("Good evening, Mrs Smith.", None), ("I want to go home.", None), ("Die Hard", None), ("", None),
])
def test_a_sentence_is_guessed_from_its_function_words(text, language):
    assert guess_language(text) == language


def test_a_word_of_two_languages_counts_for_neither():
    # "was" is English and German, "i", "to" and "do" English and Polish: "I want to do it" is no Polish
    assert not {"was", "i", "to", "do"} & set().union(*WORDS.values())
    assert guess_language("I want to do it.") is None


def test_other_language_names_each_sentence_not_in_the_source_language():
    sources = ["Did you see the letter?", "Hast du den Brief gesehen?", "Sind Sie bereit?"]
    assert other_language(sources, "en") == [(1, "de"), (2, "de")]
    assert other_language(sources, "de") == [(0, "en")]
    assert other_language(sources, "ja") == []  # no word list to compare with


class Echo(Translator):
    """An en-de Translator without a model: it gives back each source."""

    def __init__(self):
        self.direction = "en-de"
        self.model = SimpleNamespace(max_source_tokens=64)

    def pieces(self, text, where):
        return text.split()

    @property
    def context_columns(self) -> list[str]:
        return []

    def translate_samples(self, samples, generation=None, source="the input", doc0=True, style=None):
        return [s["text"]["en"] for s in samples]


def warnings_of(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_the_api_warns_of_german_given_to_an_en_de_model_and_still_translates(caplog):
    sources = ["Did you see the letter?", "Hast du den Brief gesehen?"]
    with caplog.at_level(logging.WARNING):
        assert Echo().translate(sources) == sources
    assert warnings_of(caplog) == [
        "input line 2 looks German, not English (1 of 2 lines look another language): the en-de model translates them "
        "as if they were English; give it English sentences"]
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        Echo().translate(["Did you see the letter?", "Where were you yesterday?"])
    assert warnings_of(caplog) == []


def test_the_command_warns_of_german_given_to_an_en_de_model(caplog, monkeypatch):
    monkeypatch.setattr(translate_text_module.Translator, "load", classmethod(lambda cls, model_dir: Echo()))
    with caplog.at_level(logging.WARNING):
        hyps = translate_text_module.translate_text("results/models/en-de/mtcue", ["Sind Sie bereit?", "Wo warst du?"])
    assert hyps == ["Sind Sie bereit?", "Wo warst du?"]
    assert warnings_of(caplog) == [
        "input line 1 looks German, not English (1 of 2 lines look another language): the en-de model translates them "
        "as if they were English; give it English sentences"]


def test_the_served_model_warns_of_german_given_to_an_en_de_model(caplog):
    from mtcue.reporting.logged_model import TranslatorModel

    served = TranslatorModel()
    served.translator = Echo()
    with caplog.at_level(logging.WARNING):
        hyps = served.predict(None, pd.DataFrame({"source": ["Are you ready?", "Sind Sie bereit?"]}))
    assert hyps == ["Are you ready?", "Sind Sie bereit?"]
    assert warnings_of(caplog) == [
        "input line 2 looks German, not English (1 of 2 lines look another language): the en-de model translates them "
        "as if they were English; give it English sentences"]
