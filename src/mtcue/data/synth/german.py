"""German: du / ihr / Sie address with their verb forms, pronoun cases and possessives.

Patterns never put the formal "Sie" first in a sentence, where it would read as "she" or
"they"; the verb form and Ihnen / Ihr keep the markers unambiguous.
"""
from __future__ import annotations

from mtcue.data.synth.situation import FEMININE, FORMAL, MASCULINE, Situation
from mtcue.data.synth.template import Language


def _address(s: Situation) -> int:
    """Column of the address tables: 0 du (informal, one), 1 ihr (informal, many), 2 Sie."""
    if s.formality == FORMAL:
        return 2
    return 1 if s.plural else 0


PRONOUNS = {  # case -> (du, ihr, Sie)
    "nom": ("du", "ihr", "Sie"), "acc": ("dich", "euch", "Sie"), "dat": ("dir", "euch", "Ihnen"),
    "refl_acc": ("dich", "euch", "sich"), "refl_dat": ("dir", "euch", "sich"),
}
VERBS_2ND = {  # verb -> (du, ihr, Sie)
    "haben": ("hast", "habt", "haben"), "sein": ("bist", "seid", "sind"),
    "hatten": ("hattest", "hattet", "hatten"), "waren": ("warst", "wart", "waren"),
    "wären": ("wärst", "wärt", "wären"), "wollen": ("willst", "wollt", "wollen"),
    "wollten": ("wolltest", "wolltet", "wollten"), "können": ("kannst", "könnt", "können"),
    "könnten": ("könntest", "könntet", "könnten"), "sollten": ("solltest", "solltet", "sollten"),
    "möchten": ("möchtest", "möchtet", "möchten"), "wussten": ("wusstest", "wusstet", "wussten"),
    "wohnen": ("wohnst", "wohnt", "wohnen"), "arbeiten": ("arbeitest", "arbeitet", "arbeiten"),
    "denken": ("denkst", "denkt", "denken"), "verstehen": ("verstehst", "versteht", "verstehen"),
    "hören": ("hörst", "hört", "hören"), "machen": ("machst", "macht", "machen"),
    "kennen": ("kennst", "kennt", "kennen"), "brauchen": ("brauchst", "braucht", "brauchen"),
    "wünschen": ("wünschst", "wünscht", "wünschen"),
}
IMPERATIVES = {  # verb -> (du, ihr, Sie); the Sie form is followed by "Sie"
    "setzen": ("setz", "setzt", "setzen"), "kommen": ("komm", "kommt", "kommen"),
    "warten": ("warte", "wartet", "warten"), "hören": ("hör", "hört", "hören"),
    "sagen": ("sag", "sagt", "sagen"), "machen": ("mach", "macht", "machen"),
    "geben": ("gib", "gebt", "geben"), "sehen": ("sieh", "seht", "sehen"),
    "nehmen": ("nimm", "nehmt", "nehmen"), "helfen": ("hilf", "helft", "helfen"),
    "beruhigen": ("beruhig", "beruhigt", "beruhigen"),
    "entschuldigen": ("entschuldige", "entschuldigt", "entschuldigen"),
    "bedienen": ("bedien", "bedient", "bedienen"),
}
NOUNS = {  # slot value -> (noun, gender m/f/n)
    "letter": ("Brief", "m"), "key": ("Schlüssel", "m"), "ticket": ("Fahrkarte", "f"),
    "phone": ("Handy", "n"), "passport": ("Pass", "m"), "wallet": ("Brieftasche", "f"),
    "bag": ("Tasche", "f"), "book": ("Buch", "n"), "photo": ("Foto", "n"), "box": ("Kiste", "f"),
    "umbrella": ("Regenschirm", "m"), "suitcase": ("Koffer", "m"), "map": ("Landkarte", "f"),
    "help": ("Hilfe", "f"), "patience": ("Geduld", "f"), "time": ("Zeit", "f"),
}
ARTICLES = {  # (determiner, case) -> (m, f, n)
    ("def", "nom"): ("der", "die", "das"), ("def", "acc"): ("den", "die", "das"),
    ("indef", "nom"): ("ein", "eine", "ein"), ("indef", "acc"): ("einen", "eine", "ein"),
}
POSSESSIVE_ENDINGS = {"nom": ("", "e", ""), "acc": ("en", "e", "")}  # (m, f, n)
GENDERS = "mfn"
PARTICIPLES = {"see": "gesehen", "find": "gefunden", "bring": "mitgebracht", "lose": "verloren",
               "take": "genommen", "forget": "vergessen", "hide": "versteckt", "read": "gelesen",
               "buy": "gekauft", "open": "geöffnet"}
PERSONS = {  # slot value -> (nominative, accusative)
    "brother": ("mein Bruder", "meinen Bruder"), "sister": ("meine Schwester", "meine Schwester"),
    "doctor": ("der Arzt", "den Arzt"), "neighbour": ("unser Nachbar", "unseren Nachbarn"),
    "lawyer": ("der Anwalt", "den Anwalt"), "wife": ("seine Frau", "seine Frau"),
    "husband": ("ihr Mann", "ihren Mann"), "boss": ("der Chef", "den Chef"),
}


def possessive(stem: str, gender: str, case: str) -> str:
    """mein/dein/Ihr/euer with its ending; euer drops its e before an ending (eure, euren)."""
    ending = POSSESSIVE_ENDINGS[case][GENDERS.index(gender)]
    if stem == "euer" and ending:
        stem = "eur"
    return stem + ending


class German(Language):
    code = "de"
    nouns = NOUNS
    phenomena = ("formality", "addressee_number")
    titles = {"mr": "Herr", "mrs": "Frau", "ms": "Frau"}
    vocative_words = {"sir": "mein Herr", "madam": "gnädige Frau", "man": "Alter", "dude": "Alter",
                      "buddy": "Kumpel", "girl": "Mädchen", "lady": "junge Dame",
                      "ladies": "meine Damen und Herren", "guys": "Leute"}
    lexicon = {
        "adj": {"tired": "müde", "ready": "bereit", "sure": "sicher", "hungry": "hungrig",
                "angry": "wütend", "happy": "glücklich", "busy": "beschäftigt", "alone": "allein",
                "sick": "krank", "worried": "besorgt", "surprised": "überrascht",
                "disappointed": "enttäuscht", "nervous": "nervös"},
        "inf": {"go_home": "nach Hause gehen", "help": "helfen", "stay": "hierbleiben",
                "leave": "jetzt gehen", "talk": "mit ihm reden", "sleep": "ein bisschen schlafen",
                "eat": "etwas essen", "dance": "tanzen", "wait": "warten",
                "try_again": "es noch einmal versuchen", "take_car": "das Auto nehmen",
                "police": "die Polizei rufen", "doctor": "zum Arzt gehen",
                "come_along": "mit uns kommen", "film": "einen Film sehen",
                "coffee": "einen Kaffee trinken"},
        "req": {"seat": "Platz nehmen", "moment": "einen Moment warten", "sign": "hier unterschreiben",
                "come": "mitkommen", "door": "die Tür schließen", "form": "dieses Formular ausfüllen",
                "louder": "etwas lauter sprechen"},
        "when": {"yesterday": "gestern", "last_night": "gestern Abend", "morning": "heute Morgen",
                 "sunday": "am Sonntag", "party": "auf der Party"},
        "later": {"tomorrow": "morgen", "tonight": "heute Abend", "later": "später",
                  "monday": "am Montag", "hour": "in einer Stunde"},
        "hour": {"five": "fünf", "six": "sechs", "seven": "sieben", "eight": "acht", "nine": "neun",
                 "ten": "zehn"},
        "drink": {"tea": "einen Tee", "coffee": "einen Kaffee", "wine": "ein Glas Wein",
                  "drink": "etwas zu trinken"},
        "he": {MASCULINE: "er", FEMININE: "sie"},
    }
    frames = {
        # address
        "did_you_verb": "{v2:haben} {du} {obj:def:acc} {verb}?",
        "have_you_verb_my": "{v2:haben} {du} {obj:mein:acc} {verb}?",
        "is_this_yours": "Ist das {obj:dein:nom}?",
        "where_is_yours": "Wo ist {obj:dein:nom}?",
        "do_you_have": "{v2:haben} {du} {obj:def:acc}?",
        "do_you_need": "{v2:brauchen} {du} {obj:indef:acc}?",
        "are_you_adj": "{v2:sein} {du} {adj}?",
        "were_you_adj": "{v2:waren} {du} {adj}?",
        "you_were_right": "Da {v2:hatten} {du} recht.",
        "where_were_you": "Wo {v2:waren} {du} {when}?",
        "what_do_you_want": "Was {v2:wollen} {du}?",
        "where_do_you_live": "Wo {v2:wohnen} {du}?",
        "where_do_you_work": "Wo {v2:arbeiten} {du}?",
        "what_do_you_think": "Was {v2:denken} {du}?",
        "do_you_understand": "{v2:verstehen} {du}?",
        "can_you_hear_me": "{v2:hören} {du} mich?",
        "what_are_you_doing": "Was {v2:machen} {du} hier?",
        "do_you_know_person": "{v2:kennen} {du} {person:acc}?",
        "do_you_want_to": "{v2:wollen} {du} {inf}?",
        "can_you_inf": "{v2:können} {du} {inf}?",
        "maybe_you_should": "Vielleicht {v2:sollten} {du} {inf}.",
        "would_you_like_to": "{v2:möchten} {du} {inf}?",
        "did_you_want_to": "{v2:wollten} {du} {inf}?",
        "talk_to_you": "Ich will mit {dir} reden.",
        "have_for_you": "Ich habe {obj:indef:acc} für {dich}.",
        "call_you": "Ich rufe {dich} {later} an.",
        "help_you": "Ich kann {dir} helfen.",
        "how_are_you": "Wie geht es {dir}?",
        "did_you_sleep": "{v2:haben} {du} gut geschlafen?",
        "have_you_eaten": "{v2:haben} {du} schon gegessen?",
        "how_did_you_know": "Woher {v2:wussten} {du} das?",
        "why_lie": "Warum {v2:haben} {du} mich angelogen?",
        "why_not_call": "Warum {v2:haben} {du} nicht angerufen?",
        "you_promised": "Das {v2:haben} {du} versprochen.",
        "great_job": "Das {v2:haben} {du} toll gemacht.",
        "thanks_for_your": "Danke für {thing:dein:acc}.",
        "sit_down": "{imp:setzen} {refl_acc}.",
        "come_here": "{imp:kommen} her.",
        "wait_here": "{imp:warten} hier.",
        "listen_to_me": "{imp:hören} mir zu.",
        "tell_truth": "{imp:sagen} mir die Wahrheit.",
        "close_door": "{imp:machen} die Tür zu.",
        "give_me": "{imp:geben} mir {obj:def:acc}.",
        "take_obj": "{imp:nehmen} {obj:def:acc}.",
        "help_me": "{imp:helfen} mir.",
        "dont_worry": "{imp:machen} {refl_dat} keine Sorgen.",
        # speaker (German shows no speaker gender; some show the address)
        "i_verbed": "Ich habe {obj:def:acc} {verb}.",
        "i_verbed_your": "Ich habe {obj:dein:acc} {verb}.",
        "i_was_adj": "Ich war {adj}.",
        "im_adj": "Ich bin {adj}.",
        "i_wanted_to": "Ich wollte {inf}.",
        "id_like_to": "Ich würde gern {inf}.",
        "i_should": "Ich sollte {inf}.",
        "couldnt_find": "Ich konnte {obj:mein:acc} nicht finden.",
        "went_home": "Ich bin früh nach Hause gegangen.",
        "didnt_know": "Das wusste ich nicht.",
        "i_forgot": "Ich habe es vergessen.",
        "thought_so": "Das habe ich mir gedacht.",
        "did_everything": "Ich habe alles getan, was ich konnte.",
        "thought_you_adj": "Ich dachte, {du} {v2:wären} {adj}.",
        "told_you": "Ich habe es {dir} doch gesagt.",
        "saw_you": "Ich habe {dich} {when} gesehen.",
        "waited_for_you": "Ich habe auf {dich} gewartet.",
        "believed_you": "Ich habe {dir} geglaubt.",
        "worried_about_you": "Ich habe mir Sorgen um {dich} gemacht.",
        "proud_of_you": "Ich bin stolz auf {dich}.",
        "missed_you": "Ich habe {dich} vermisst.",
        # neutral
        "where_is": "Wo ist {obj:def:nom}?",
        "on_table": "{obj:def:nom} liegt auf dem Tisch.",
        "it_on_table": "{obj:agree:er:sie:es} liegt auf dem Tisch.",
        "it_gone": "{obj:agree:er:sie:es} ist verschwunden.",
        "cant_find_it": "Ich finde {obj:agree:ihn:sie:es} nicht.",
        "found_it": "{v2:haben} {du} {obj:agree:ihn:sie:es} gefunden?",
        "take_it": "{imp:nehmen} {obj:agree:ihn:sie:es}.",
        "obj_gone": "{obj:def:nom} ist verschwunden.",
        "we_need": "Wir brauchen {obj:indef:acc}.",
        "train_leaves": "Der Zug fährt um {hour} Uhr ab.",
        "he_verbed": "{he} hat {obj:def:acc} {verb}.",
        "he_is_adj": "{he} ist {adj}.",
        "he_wants_to": "{he} will {inf}.",
        "where_is_person": "Wo ist {person:nom}?",
        "dont_know": "Ich weiß es nicht.",
        "getting_late": "Es wird spät.",
        "have_to_go": "Wir müssen gehen.",
        "what_time": "Wie spät ist es?",
        "raining": "Es regnet schon wieder.",
        "bad_idea": "Das ist keine gute Idee.",
        "lets_go": "Gehen wir.",
        "im_sorry": "Es tut mir leid.",
        "someone_door": "Jemand ist an der Tür.",
        "yes": "Ja.",
        "no": "Nein.",
        "okay": "Okay.",
        # others
        "neighbour_has": "Unser Nachbar hat {obj:def:acc}.",
        "sister_looks_for": "Meine Schwester sucht {obj:def:acc}.",
        "belongs_to_brother": "{obj:def:nom} gehört meinem Bruder.",
        "gave_to_sister": "Ich habe {obj:def:acc} meiner Schwester gegeben.",
        # greeting
        "greet_evening": "Guten Abend, {voc}.",
        "greet_morning": "Guten Morgen, {voc}.",
        "greet_hello": "Hallo, {voc}.",
        "thank_voc": "Danke, {voc}.",
        "excuse_voc": "Entschuldigung, {voc}.",
        "whats_up": "Was ist los, {voc}?",
        "certainly": "Natürlich, {voc}.",
        "as_you_wish": "Wie {du} {v2:wünschen}, {voc}.",
        "forgive_me": "Verzeihung, {voc}.",
        "grab_beer": "Ich hole mir ein Bier, {voc}.",
        # styled
        "calm_down": "{imp:beruhigen} {refl_acc}.",
        "look_this": "{imp:sehen} {refl_dat} das an.",
        "kidding": "Das ist doch nicht {dein:m:nom} Ernst.",
        "disturb": "{imp:entschuldigen} die Störung.",
        "honour": "Es ist mir eine Ehre, {dich} kennenzulernen.",
        "nice_meet": "Schön, {dich} kennenzulernen.",
        "offer_drink": "Darf ich {dir} {drink} anbieten?",
        "could_you_req": "{v2:könnten} {du} bitte {req}?",
        "grateful": "Ich bin {dir} sehr dankbar.",
        "help_yourself": "{imp:bedienen} {refl_acc}.",
        "amazing": "Das ist ja unglaublich!",
        "disagree": "Da bin ich anderer Meinung.",
        "see_you": "Bis später.",
        "splendid": "Großartig.",
        "proceed": "Machen wir weiter.",
        "no_idea": "Ich habe keine Ahnung.",
        "really_good": "Das ist wirklich gut.",
        "long_day": "Das war ein langer Tag.",
        "no_problem": "Kein Problem.",
        "good_idea": "Gute Idee.",
        "very_well": "Na gut.",
        "good_night": "Gute Nacht.",
        # self
        "self_little": "Ich bin kein {self:kleines Mädchen:kleiner Junge} mehr.",
        "self_grown": "Ich bin {self:eine erwachsene Frau:ein erwachsener Mann}.",
        "self_kind": "Ich bin nicht {self:so ein Mädchen:so ein Typ}.",
        "self_look_like": "Sehe ich aus wie {self:eine Kellnerin:ein Kellner}?",
        "self_old": "Ich bin nur {self:eine alte Frau:ein alter Mann}.",
        "self_insist": "Als {self:Dame:Gentleman} muss ich darauf bestehen.",
        "self_lucky": "Ich bin {self:eine glückliche Frau:ein glücklicher Mann}.",
        "self_big": "Ich bin {self:ein großes Mädchen:ein großer Junge}, ich schaffe das.",
        "self_mother": "Ich bin {self:Mutter:Vater}, ich mache mir Sorgen.",
        # group
        "group_morning": "Guten Morgen zusammen.",
        "group_attention": "Meine Damen und Herren, darf ich um {dein:f:acc} Aufmerksamkeit bitten?",
        "group_listen": "Leute, hört mal zu!",
        "thank_all": "Danke, dass {du} gekommen {v2:sein}.",
        "all_ready": "{v2:sein} {du} alle bereit?",
    }

    def h_du(self, slots, s):
        return PRONOUNS["nom"][_address(s)]

    def h_dich(self, slots, s):
        return PRONOUNS["acc"][_address(s)]

    def h_dir(self, slots, s):
        return PRONOUNS["dat"][_address(s)]

    def h_refl_acc(self, slots, s):
        return PRONOUNS["refl_acc"][_address(s)]

    def h_refl_dat(self, slots, s):
        return PRONOUNS["refl_dat"][_address(s)]

    def h_v2(self, slots, s, verb):
        return VERBS_2ND[verb][_address(s)]

    def h_imp(self, slots, s, verb):
        form = IMPERATIVES[verb][_address(s)]
        return f"{form} Sie" if s.formality == FORMAL else form

    def h_dein(self, slots, s, gender, case):
        """Possessive of the addressee: dein / euer / Ihr."""
        return possessive(("dein", "euer", "Ihr")[_address(s)], gender, case)

    def _noun_phrase(self, key, s, determiner, case):
        noun, gender = NOUNS[key]
        if determiner in ("def", "indef"):
            article = ARTICLES[determiner, case][GENDERS.index(gender)]
        elif determiner == "dein":
            article = self.h_dein(None, s, gender, case)
        else:
            article = possessive(determiner, gender, case)
        return f"{article} {noun}"

    def h_obj(self, slots, s, determiner, *args):
        if determiner == "agree":  # a pronoun of the object noun's gender: {obj:agree:m:f:n}
            return args[GENDERS.index(NOUNS[slots["obj"]][1])]
        return self._noun_phrase(slots["obj"], s, determiner, *args)

    def h_thing(self, slots, s, determiner, case):
        return self._noun_phrase(slots["thing"], s, determiner, case)

    def h_verb(self, slots, s):
        return PARTICIPLES[slots["verb"]]

    def h_person(self, slots, s, case):
        return PERSONS[slots["person"]][("nom", "acc").index(case)]


GERMAN = German()
