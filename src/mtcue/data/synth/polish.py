"""Polish: ty / wy versus pan / pani / państwo, and gender agreement.

Formal address is third person with pan (a man), pani (a woman) or państwo (a group):
"Czy widziałeś list?" / "Czy pani widziała list?". Past tense, conditional and adjectives
agree with the speaker in the first person (byłem zmęczony / byłam zmęczona) and with the
addressee in the second (zrobiłeś / zrobiłaś). Groups are of mixed gender, so they take the
virile plural (zrobiliście, państwo zrobili). pan/pani are written in lower case, as in
dialogue (capitals are for letters).
"""
from __future__ import annotations

from mtcue.data.synth.situation import FEMININE, FORMAL, GROUP, MASCULINE, Situation
from mtcue.data.synth.template import Language


def _address(s: Situation) -> int:
    """Column of PRONOUNS: 0 ty, 1 wy, 2 pan, 3 pani, 4 państwo."""
    if s.formality != FORMAL:
        return 1 if s.plural else 0
    return {MASCULINE: 2, FEMININE: 3, GROUP: 4}[s.addressee]


PRONOUNS = {  # case -> (ty, wy, pan, pani, państwo)
    "pro": ("", "", "pan", "pani", "państwo"),  # subject: dropped in informal address
    "acc_clitic": ("cię", "was", "pana", "panią", "państwa"),
    "acc": ("ciebie", "was", "pana", "panią", "państwa"),
    "gen": ("ciebie", "was", "pana", "pani", "państwa"),
    "dat": ("ci", "wam", "panu", "pani", "państwu"),
    "ins": ("tobą", "wami", "panem", "panią", "państwem"),
}
PAST = {  # lemma -> 3rd person past: (masculine, feminine, virile plural)
    "być": ("był", "była", "byli"), "dać": ("dał", "dała", "dali"), "mieć": ("miał", "miała", "mieli"),
    "chcieć": ("chciał", "chciała", "chcieli"), "móc": ("mógł", "mogła", "mogli"),
    "myśleć": ("myślał", "myślała", "myśleli"), "wiedzieć": ("wiedział", "wiedziała", "wiedzieli"),
    "powinien": ("powinien", "powinna", "powinni"), "martwić": ("martwił", "martwiła", "martwili"),
    "tęsknić": ("tęsknił", "tęskniła", "tęsknili"), "czekać": ("czekał", "czekała", "czekali"),
    "wierzyć": ("wierzył", "wierzyła", "wierzyli"), "mówić": ("mówił", "mówiła", "mówili"),
    "zrobić": ("zrobił", "zrobiła", "zrobili"), "pójść": ("poszedł", "poszła", "poszli"),
    "przyjść": ("przyszedł", "przyszła", "przyszli"),
    "zapomnieć": ("zapomniał", "zapomniała", "zapomnieli"), "spać": ("spał", "spała", "spali"),
    "jeść": ("jadł", "jadła", "jedli"), "spisać": ("spisał", "spisała", "spisali"),
    "obiecać": ("obiecał", "obiecała", "obiecali"), "okłamać": ("okłamał", "okłamała", "okłamali"),
    "zadzwonić": ("zadzwonił", "zadzwoniła", "zadzwonili"),
    "widzieć": ("widział", "widziała", "widzieli"), "znaleźć": ("znalazł", "znalazła", "znaleźli"),
    "przynieść": ("przyniósł", "przyniosła", "przynieśli"), "zgubić": ("zgubił", "zgubiła", "zgubili"),
    "wziąć": ("wziął", "wzięła", "wzięli"), "schować": ("schował", "schowała", "schowali"),
    "przeczytać": ("przeczytał", "przeczytała", "przeczytali"), "kupić": ("kupił", "kupiła", "kupili"),
    "otworzyć": ("otworzył", "otworzyła", "otworzyli"),
}
PRESENT = {  # lemma -> (2sg, 3sg, 2pl, 3pl)
    "być": ("jesteś", "jest", "jesteście", "są"), "mieć": ("masz", "ma", "macie", "mają"),
    "chcieć": ("chcesz", "chce", "chcecie", "chcą"), "móc": ("możesz", "może", "możecie", "mogą"),
    "mieszkać": ("mieszkasz", "mieszka", "mieszkacie", "mieszkają"),
    "pracować": ("pracujesz", "pracuje", "pracujecie", "pracują"),
    "myśleć": ("myślisz", "myśli", "myślicie", "myślą"),
    "rozumieć": ("rozumiesz", "rozumie", "rozumiecie", "rozumieją"),
    "słyszeć": ("słyszysz", "słyszy", "słyszycie", "słyszą"),
    "robić": ("robisz", "robi", "robicie", "robią"), "znać": ("znasz", "zna", "znacie", "znają"),
    "potrzebować": ("potrzebujesz", "potrzebuje", "potrzebujecie", "potrzebują"),
    "czuć": ("czujesz", "czuje", "czujecie", "czują"),
    "życzyć": ("życzysz", "życzy", "życzycie", "życzą"),
    "żartować": ("żartujesz", "żartuje", "żartujecie", "żartują"),
}
IMPERATIVES = {  # lemma -> (2sg, 2pl, infinitive after formal "proszę")
    "usiąść": ("usiądź", "usiądźcie", "usiąść"), "przyjść": ("chodź", "chodźcie", "podejść"),
    "zaczekać": ("zaczekaj", "zaczekajcie", "zaczekać"),
    "posłuchać": ("posłuchaj", "posłuchajcie", "posłuchać"),
    "powiedzieć": ("powiedz", "powiedzcie", "powiedzieć"),
    "zamknąć": ("zamknij", "zamknijcie", "zamknąć"), "dać": ("daj", "dajcie", "dać"),
    "spojrzeć": ("spójrz", "spójrzcie", "spojrzeć"), "wziąć": ("weź", "weźcie", "wziąć"),
    "pomóc": ("pomóż", "pomóżcie", "pomóc"), "uspokoić": ("uspokój", "uspokójcie", "uspokoić"),
    "częstować": ("częstuj", "częstujcie", "częstować"),
    "nie_martwić": ("nie martw", "nie martwcie", "nie martwić"),
}
NOUNS = {  # slot value -> (nominative, accusative, genitive, gender m/f/n)
    "letter": ("list", "list", "listu", "m"), "key": ("klucz", "klucz", "klucza", "m"),
    "ticket": ("bilet", "bilet", "biletu", "m"), "phone": ("telefon", "telefon", "telefonu", "m"),
    "passport": ("paszport", "paszport", "paszportu", "m"),
    "wallet": ("portfel", "portfel", "portfela", "m"), "bag": ("torba", "torbę", "torby", "f"),
    "book": ("książka", "książkę", "książki", "f"), "photo": ("zdjęcie", "zdjęcie", "zdjęcia", "n"),
    "box": ("pudełko", "pudełko", "pudełka", "n"), "umbrella": ("parasol", "parasol", "parasola", "m"),
    "suitcase": ("walizka", "walizkę", "walizki", "f"), "map": ("mapa", "mapę", "mapy", "f"),
    "help": ("pomoc", "pomoc", "pomocy", "f"),
    "patience": ("cierpliwość", "cierpliwość", "cierpliwości", "f"),
    "time": ("czas", "czas", "czasu", "m"),
}
CASES = ("nom", "acc", "gen")
VERBS = {  # verb slot value -> (lemma, case of its object)
    "see": ("widzieć", "acc"), "find": ("znaleźć", "acc"), "bring": ("przynieść", "acc"),
    "lose": ("zgubić", "acc"), "take": ("wziąć", "acc"), "forget": ("zapomnieć", "gen"),
    "hide": ("schować", "acc"), "read": ("przeczytać", "acc"), "buy": ("kupić", "acc"),
    "open": ("otworzyć", "acc"),
}
ADJECTIVES = {  # slot value -> (masculine, feminine, virile plural)
    "tired": ("zmęczony", "zmęczona", "zmęczeni"), "ready": ("gotowy", "gotowa", "gotowi"),
    "sure": ("pewien", "pewna", "pewni"), "hungry": ("głodny", "głodna", "głodni"),
    "angry": ("zły", "zła", "źli"), "happy": ("szczęśliwy", "szczęśliwa", "szczęśliwi"),
    "busy": ("zajęty", "zajęta", "zajęci"), "alone": ("sam", "sama", "sami"),
    "sick": ("chory", "chora", "chorzy"), "worried": ("zmartwiony", "zmartwiona", "zmartwieni"),
    "surprised": ("zaskoczony", "zaskoczona", "zaskoczeni"),
    "disappointed": ("rozczarowany", "rozczarowana", "rozczarowani"),
    "nervous": ("zdenerwowany", "zdenerwowana", "zdenerwowani"),
}
PERSONS = {  # slot value -> (nominative, accusative)
    "brother": ("mój brat", "mojego brata"), "sister": ("moja siostra", "moją siostrę"),
    "doctor": ("lekarz", "lekarza"), "neighbour": ("nasz sąsiad", "naszego sąsiada"),
    "lawyer": ("prawnik", "prawnika"), "wife": ("jego żona", "jego żonę"),
    "husband": ("jej mąż", "jej męża"), "boss": ("szef", "szefa"),
}
_POSSESSIVE_ENDINGS = {  # (gender, case) -> ending after the stem (moj-, twoj-, wasz-)
    ("f", "nom"): "a", ("f", "acc"): "ą", ("f", "gen"): "ej",
    ("n", "nom"): "e", ("n", "acc"): "e", ("n", "gen"): "ego", ("m", "gen"): "ego",
}
_FORMAL_POSSESSIVE = ("pana", "pani", "państwa")  # genitive of pan/pani/państwo, never inflects


def _stem(masculine_past: str) -> str:
    """Stem for the 1st/2nd person masculine endings: mógł -> mogł(em), przyniósł -> przyniosł(em).

    An ó in the last syllable becomes o once the ending opens the syllable; an ó earlier in
    the word stays (mówił -> mówiłem).
    """
    vowels = [i for i, ch in enumerate(masculine_past) if ch in "aąeęioóuy"]
    last = vowels[-1]
    if masculine_past[last] == "ó":
        return masculine_past[:last] + "o" + masculine_past[last + 1:]
    return masculine_past


def past(lemma: str, person: int, who: str) -> str:
    """Past tense (and powinien) of `lemma` for a person 1-3 and FEMININE/MASCULINE/GROUP."""
    masculine, feminine, plural = PAST[lemma]
    if who == GROUP:
        return plural + ("śmy", "ście", "")[person - 1]
    if who == FEMININE:
        return feminine + ("m", "ś", "")[person - 1]
    return (_stem(masculine) + "em", _stem(masculine) + "eś", masculine)[person - 1]


def conditional(lemma: str, person: int, who: str) -> str:
    masculine, feminine, plural = PAST[lemma]
    if who == GROUP:
        return plural + ("byśmy", "byście", "by")[person - 1]
    return (feminine if who == FEMININE else masculine) + ("bym", "byś", "by")[person - 1]


def possessive(lemma: str, gender: str, case: str) -> str:
    """mój / twój / wasz agreeing with a noun (masculine nouns here are inanimate)."""
    ending = _POSSESSIVE_ENDINGS.get((gender, case))
    if ending is None:  # masculine nominative or accusative: the lemma itself
        return lemma
    return {"mój": "moj", "twój": "twoj"}.get(lemma, lemma) + ending


def _agree(forms: tuple[str, str, str], who: str) -> str:
    """Pick from (masculine, feminine, virile plural)."""
    return forms[(MASCULINE, FEMININE, GROUP).index(who)]


class Polish(Language):
    code = "pl"
    nouns = NOUNS
    phenomena = ("formality", "speaker_gender", "addressee_gender", "addressee_number")
    titles = {"mr": "panie", "mrs": "pani", "ms": "pani"}
    vocative_words = {"sir": "proszę pana", "madam": "proszę pani", "man": "stary", "dude": "stary",
                      "buddy": "kolego", "girl": "dziewczyno", "lady": "panienko",
                      "ladies": "proszę państwa", "guys": "ludzie"}
    lexicon = {
        "inf": {"go_home": "iść do domu", "help": "pomóc", "stay": "zostać tutaj", "leave": "już iść",
                "talk": "z nim porozmawiać", "sleep": "trochę się przespać", "eat": "coś zjeść",
                "dance": "zatańczyć", "wait": "poczekać", "try_again": "spróbować jeszcze raz",
                "take_car": "wziąć samochód", "police": "zadzwonić na policję",
                "doctor": "iść do lekarza", "come_along": "pójść z nami", "film": "obejrzeć film",
                "coffee": "napić się kawy"},
        "req": {"seat": "usiąść", "moment": "chwilę zaczekać", "sign": "tu podpisać",
                "come": "pójść ze mną", "door": "zamknąć drzwi", "form": "wypełnić ten formularz",
                "louder": "mówić trochę głośniej"},
        "when": {"yesterday": "wczoraj", "last_night": "wczoraj wieczorem", "morning": "dziś rano",
                 "sunday": "w niedzielę", "party": "na imprezie"},
        "later": {"tomorrow": "jutro", "tonight": "dziś wieczorem", "later": "później",
                  "monday": "w poniedziałek", "hour": "za godzinę"},
        "hour": {"five": "piątej", "six": "szóstej", "seven": "siódmej", "eight": "ósmej",
                 "nine": "dziewiątej", "ten": "dziesiątej"},
        "drink": {"tea": "herbatę", "coffee": "kawę", "wine": "kieliszek wina",
                  "drink": "coś do picia"},
        "he": {MASCULINE: "on", FEMININE: "ona"},
    }
    frames = {
        # address
        "did_you_verb": "Czy {pro} {verb:past2} {obj:gov}?",
        "have_you_verb_my": "Czy {pro} {verb:past2} {obj:mój:gov}?",
        "is_this_yours": "Czy to {obj:twój:nom}?",
        "where_is_yours": "Gdzie jest {obj:twój:nom}?",
        "do_you_have": "Czy {pro} {pres2:mieć} {obj:acc}?",
        "do_you_need": "Czy {pro} {pres2:potrzebować} {obj:gen}?",
        "are_you_adj": "Czy {pro} {pres2:być} {adj:2}?",
        "were_you_adj": "Czy {pro} {past2:być} {adj:2}?",
        "you_were_right": "{pro} {past2:mieć} co do tego rację.",
        "where_were_you": "Gdzie {pro} {past2:być} {when}?",
        "what_do_you_want": "Czego {pro} {pres2:chcieć}?",
        "where_do_you_live": "Gdzie {pro} {pres2:mieszkać}?",
        "where_do_you_work": "Gdzie {pro} {pres2:pracować}?",
        "what_do_you_think": "Co {pro} o tym {pres2:myśleć}?",
        "do_you_understand": "Czy {pro} {pres2:rozumieć}?",
        "can_you_hear_me": "Czy {pro} mnie {pres2:słyszeć}?",
        "what_are_you_doing": "Co {pro} tu {pres2:robić}?",
        "do_you_know_person": "Czy {pro} {pres2:znać} {person:acc}?",
        "do_you_want_to": "Czy {pro} {pres2:chcieć} {inf}?",
        "can_you_inf": "Czy {pro} {pres2:móc} {inf}?",
        "maybe_you_should": "Może {past2:powinien} {pro} {inf}.",
        "would_you_like_to": "Czy {pro} {cond2:chcieć} {inf}?",
        "did_you_want_to": "Czy {pro} {past2:chcieć} {inf}?",
        "talk_to_you": "Chcę z {ins} porozmawiać.",
        "have_for_you": "Mam {obj:acc} dla {gen}.",
        "call_you": "Zadzwonię do {gen} {later}.",
        "help_you": "Mogę {dat} pomóc.",
        "how_are_you": "Jak się {pro} {pres2:czuć}?",
        "did_you_sleep": "Czy {pro} dobrze {past2:spać}?",
        "have_you_eaten": "Czy {pro} już {past2:jeść}?",
        "how_did_you_know": "Skąd {pro} {past2:wiedzieć}?",
        "why_lie": "Dlaczego {pro} mnie {past2:okłamać}?",
        "why_not_call": "Dlaczego {pro} nie {past2:zadzwonić}?",
        "you_promised": "{pro} {past2:obiecać}.",
        "great_job": "Świetnie się {pro} {past2:spisać}.",
        "thanks_for_your": "Dziękuję za {thing:twój:acc}.",
        "sit_down": "{imp:usiąść}.",
        "come_here": "{imp:przyjść} tutaj.",
        "wait_here": "{imp:zaczekać} tutaj.",
        "listen_to_me": "{imp:posłuchać:mnie}.",
        "tell_truth": "{imp:powiedzieć:mi} prawdę.",
        "close_door": "{imp:zamknąć} drzwi.",
        "give_me": "{imp:dać:mi} {obj:acc}.",
        "take_obj": "{imp:wziąć} {obj:acc}.",
        "help_me": "{imp:pomóc:mi}.",
        "dont_worry": "{imp:nie_martwić:się}.",
        # speaker
        "i_verbed": "{verb:past1} {obj:gov}.",
        "i_verbed_your": "{verb:past1} {obj:twój:gov}.",
        "i_was_adj": "{past1:być} {adj:1}.",
        "im_adj": "Jestem {adj:1}.",
        "i_wanted_to": "{past1:chcieć} {inf}.",
        "id_like_to": "{cond1:chcieć} {inf}.",
        "i_should": "{past1:powinien} {inf}.",
        "couldnt_find": "Nie {past1:móc} znaleźć {obj:mój:gen}.",
        "went_home": "{past1:pójść} wcześnie do domu.",
        "didnt_know": "Nie {past1:wiedzieć} o tym.",
        "i_forgot": "{past1:zapomnieć}.",
        "thought_so": "Tak {past1:myśleć}.",
        "did_everything": "{past1:zrobić} wszystko, co {past1:móc}.",
        "thought_you_adj": "{past1:myśleć}, że {pro} {pres2:być} {adj:2}.",
        "told_you": "{past1:mówić} {dat}.",
        "saw_you": "{past1:widzieć} {acc_clitic} {when}.",
        "waited_for_you": "{past1:czekać} na {acc}.",
        "believed_you": "{past1:wierzyć} {dat}.",
        "worried_about_you": "{past1:martwić} się o {acc}.",
        "proud_of_you": "Jestem z {gen} {sp:dumny:dumna}.",
        "missed_you": "{past1:tęsknić} za {ins}.",
        # neutral
        "where_is": "Gdzie jest {obj:nom}?",
        "on_table": "{obj:nom} jest na stole.",
        "it_on_table": "{obj:agree:on:ona:ono} jest na stole.",
        "it_gone": "{obj:agree:on:ona:ono} {obj:agree:zniknął:zniknęła:zniknęło}.",
        "cant_find_it": "Nie mogę {obj:agree:go:jej:go} znaleźć.",
        "found_it": "Czy {pro} {verb:past2} {obj:agree:go:ją:je}?",
        "take_it": "{imp:wziąć} {obj:agree:go:ją:je}.",
        "obj_gone": "{obj:nom} {obj:agree:zniknął:zniknęła:zniknęło}.",
        "we_need": "Potrzebujemy {obj:gen}.",
        "train_leaves": "Pociąg odjeżdża o {hour}.",
        "he_verbed": "{he} {verb:past3} {obj:gov}.",
        "he_is_adj": "{he} jest {adj:3}.",
        "he_wants_to": "{he} chce {inf}.",
        "where_is_person": "Gdzie jest {person:nom}?",
        "dont_know": "Nie wiem.",
        "getting_late": "Robi się późno.",
        "have_to_go": "Musimy iść.",
        "what_time": "Która godzina?",
        "raining": "Znowu pada.",
        "bad_idea": "To nie jest dobry pomysł.",
        "lets_go": "Chodźmy.",
        "im_sorry": "Przepraszam.",
        "someone_door": "Ktoś jest przy drzwiach.",
        "yes": "Tak.",
        "no": "Nie.",
        "okay": "Dobrze.",
        # others (szukać governs the genitive)
        "neighbour_has": "Nasz sąsiad ma {obj:acc}.",
        "sister_looks_for": "Moja siostra szuka {obj:gen}.",
        "belongs_to_brother": "{obj:nom} należy do mojego brata.",
        "gave_to_sister": "{past1:dać} {obj:acc} mojej siostrze.",
        # greeting
        "greet_evening": "Dobry wieczór, {voc}.",
        "greet_morning": "Dzień dobry, {voc}.",
        "greet_hello": "Cześć, {voc}.",
        "thank_voc": "Dziękuję, {voc}.",
        "excuse_voc": "Przepraszam, {voc}.",
        "whats_up": "Co się dzieje, {voc}?",
        "certainly": "Oczywiście, {voc}.",
        "as_you_wish": "Jak {pro} sobie {pres2:życzyć}, {voc}.",
        "forgive_me": "Przepraszam bardzo, {voc}.",
        "grab_beer": "Idę na piwo, {voc}.",
        # styled
        "calm_down": "{imp:uspokoić:się}.",
        "look_this": "{imp:spojrzeć} na to.",
        "kidding": "Chyba {pro} {pres2:żartować}.",
        "disturb": "Przepraszam, że {acc_clitic} niepokoję.",
        "honour": "To zaszczyt {acc_clitic} poznać.",
        "nice_meet": "Miło {acc_clitic} poznać.",
        "offer_drink": "Czy mogę {dat} zaproponować {drink}?",
        "could_you_req": "Czy {pro} {pres2:móc} {req}?",
        "grateful": "Jestem {dat} bardzo {sp:wdzięczny:wdzięczna}.",
        "help_yourself": "{imp:częstować:się}.",
        "amazing": "To niesamowite!",
        "disagree": "Nie zgadzam się.",
        "see_you": "Do zobaczenia.",
        "splendid": "Wspaniale.",
        "proceed": "Kontynuujmy.",
        "no_idea": "Nie mam pojęcia.",
        "really_good": "To jest naprawdę dobre.",
        "long_day": "To był długi dzień.",
        "no_problem": "Nie ma problemu.",
        "good_idea": "Dobry pomysł.",
        "very_well": "No dobrze.",
        "good_night": "Dobranoc.",
        # self
        "self_little": "Nie jestem już {self:małą dziewczynką:małym chłopcem}.",
        "self_grown": "Jestem {self:dorosłą kobietą:dorosłym mężczyzną}.",
        "self_kind": "Nie jestem {self:taką dziewczyną:takim facetem}.",
        "self_look_like": "Czy wyglądam na {self:kelnerkę:kelnera}?",
        "self_old": "Jestem tylko {self:starą kobietą:starym człowiekiem}.",
        "self_insist": "Jako {self:dama:dżentelmen} muszę nalegać.",
        "self_lucky": "Jestem {self:szczęściarą:szczęściarzem}.",
        "self_big": "Jestem {self:dużą dziewczynką:dużym chłopcem}, poradzę sobie.",
        "self_mother": "Jestem {self:matką:ojcem}, martwię się.",
        # group
        "group_morning": "Dzień dobry wszystkim.",
        "group_attention": "Proszę państwa, proszę o uwagę.",
        "group_listen": "Ludzie, posłuchajcie!",
        "thank_all": "Dziękuję, że {pro} {past2:przyjść}.",
        "all_ready": "Czy {pro} wszyscy {pres2:być} gotowi?",
    }

    # Pronouns of the addressee, by case.
    def h_pro(self, slots, s):
        return PRONOUNS["pro"][_address(s)]

    def h_acc_clitic(self, slots, s):
        return PRONOUNS["acc_clitic"][_address(s)]

    def h_acc(self, slots, s):
        return PRONOUNS["acc"][_address(s)]

    def h_gen(self, slots, s):
        return PRONOUNS["gen"][_address(s)]

    def h_dat(self, slots, s):
        return PRONOUNS["dat"][_address(s)]

    def h_ins(self, slots, s):
        return PRONOUNS["ins"][_address(s)]

    # Verbs addressed to the listener: 2nd person, or 3rd person after pan/pani/państwo.
    @staticmethod
    def _second_person(s: Situation) -> int:
        return 3 if s.formality == FORMAL else 2

    def h_past2(self, slots, s, lemma):
        return past(lemma, self._second_person(s), s.addressee)

    def h_cond2(self, slots, s, lemma):
        return conditional(lemma, self._second_person(s), s.addressee)

    def h_pres2(self, slots, s, lemma):
        third = s.formality == FORMAL
        return PRESENT[lemma][2 * s.plural + third]

    def h_imp(self, slots, s, lemma, clitic=""):
        singular, plural, infinitive = IMPERATIVES[lemma]
        if s.formality == FORMAL:  # "proszę" + infinitive, the same for one or many
            return f"proszę {clitic} {infinitive}"
        return f"{plural if s.plural else singular} {clitic}"

    # The speaker's own forms.
    def h_past1(self, slots, s, lemma):
        return past(lemma, 1, s.speaker)

    def h_cond1(self, slots, s, lemma):
        return conditional(lemma, 1, s.speaker)

    def h_sp(self, slots, s, masculine, feminine):
        return feminine if s.speaker == FEMININE else masculine

    # Slots.
    def h_verb(self, slots, s, form):
        lemma = VERBS[slots["verb"]][0]
        if form == "past1":
            return past(lemma, 1, s.speaker)
        if form == "past2":
            return past(lemma, self._second_person(s), s.addressee)
        return past(lemma, 3, slots["he"])

    def _noun_phrase(self, key, s, args, slots):
        *forms, gender = NOUNS[key]
        *determiner, case = args
        if case == "gov":
            case = VERBS[slots["verb"]][1]
        noun = forms[CASES.index(case)]
        if not determiner:
            return noun
        if determiner[0] == "twój":  # the addressee's
            column = _address(s)
            if column >= 2:
                return f"{_FORMAL_POSSESSIVE[column - 2]} {noun}"
            determiner = ["wasz" if column == 1 else "twój"]
        return f"{possessive(determiner[0], gender, case)} {noun}"

    def h_obj(self, slots, s, *args):
        if args[0] == "agree":  # a word agreeing with the object noun: {obj:agree:m:f:n}
            return args[1 + "mfn".index(NOUNS[slots["obj"]][3])]
        return self._noun_phrase(slots["obj"], s, args, slots)

    def h_thing(self, slots, s, *args):
        return self._noun_phrase(slots["thing"], s, args, slots)

    def h_adj(self, slots, s, agreement):
        """Predicative adjective agreeing with 1 the speaker, 2 the addressee, 3 the `he` slot."""
        who = {"1": s.speaker, "2": s.addressee, "3": slots.get("he")}[agreement]
        return _agree(ADJECTIVES[slots["adj"]], who)

    def h_person(self, slots, s, case):
        return PERSONS[slots["person"]][("nom", "acc").index(case)]


POLISH = Polish()
