"""French: tu versus vous, and gender agreement.

One listener addressed informally is tu; a formal listener and any group are vous, so French
shows the register only for a single listener, and the number in formal address only where
an adjective or participle agrees (labels.py finds this out by rendering: plural vous
renders the same in both registers, so it is never evidence of formality).
Adjectives and participles agree with whom they describe: the speaker after je suis
(je suis fatigué / fatiguée), the listener after tu es / vous êtes (fatiguée; a group,
of mixed gender, takes the masculine plural fatigués), and a direct-object te/vous before
avoir (je t'ai vue). Questions keep the pronoun as a word of its own (est-ce que, no
inversion), and te becomes t' before a vowel by the ordinary elision rule.
"""
from __future__ import annotations

import re

from mtcue.data.synth.situation import FEMININE, FORMAL, GROUP, MASCULINE, Situation
from mtcue.data.synth.template import Language

VOWELS = "aeiouéèêâîôû"
_ELISION = re.compile(rf"\b([Tt])e (?=[{VOWELS}])")  # te ai -> t'ai


def _address(s: Situation) -> int:
    """Column of the address tables: 0 tu (informal, one), 1 vous (formal, or many)."""
    return 0 if s.formality != FORMAL and not s.plural else 1


def _agree(forms: tuple[str, str, str], who: str) -> str:
    """Pick from (masculine, feminine, masculine plural) for MASCULINE/FEMININE/GROUP."""
    return forms[(MASCULINE, FEMININE, GROUP).index(who)]


PRONOUNS = {  # case -> (tu, vous)
    "pro": ("tu", "vous"), "te": ("te", "vous"), "toi": ("toi", "vous"),
}
VERBS_2ND = {  # verb -> (tu, vous)
    "avoir": ("as", "avez"), "être": ("es", "êtes"), "étais": ("étais", "étiez"),
    "avais": ("avais", "aviez"), "vouloir": ("veux", "voulez"), "voulais": ("voulais", "vouliez"),
    "voudrais": ("voudrais", "voudriez"), "pouvoir": ("peux", "pouvez"),
    "pourrais": ("pourrais", "pourriez"), "devrais": ("devrais", "devriez"),
    "savais": ("savais", "saviez"), "habiter": ("habites", "habitez"),
    "travailler": ("travailles", "travaillez"), "penser": ("penses", "pensez"),
    "comprendre": ("comprends", "comprenez"), "entendre": ("entends", "entendez"),
    "faire": ("fais", "faites"), "connaître": ("connais", "connaissez"), "aller": ("vas", "allez"),
    "plaisanter": ("plaisantes", "plaisantez"),
}
IMPERATIVES = {  # verb -> (tu, vous), with the pronoun that a reflexive verb takes
    "asseoir": ("assieds-toi", "asseyez-vous"), "venir": ("viens", "venez"),
    "attendre": ("attends", "attendez"), "écouter": ("écoute-moi", "écoutez-moi"),
    "dire": ("dis-moi", "dites-moi"), "fermer": ("ferme", "fermez"),
    "donner": ("donne-moi", "donnez-moi"), "prendre": ("prends", "prenez"),
    "aider": ("aide-moi", "aidez-moi"), "inquiéter": ("ne t'inquiète pas", "ne vous inquiétez pas"),
    "calmer": ("calme-toi", "calmez-vous"), "regarder": ("regarde", "regardez"),
    "servir": ("sers-toi", "servez-vous"),
}
NOUNS = {  # slot value -> (noun, gender m/f); no object noun begins with a vowel, so le/la stay
    "letter": ("lettre", "f"), "key": ("clé", "f"), "ticket": ("billet", "m"),
    "phone": ("téléphone", "m"), "passport": ("passeport", "m"), "wallet": ("portefeuille", "m"),
    "bag": ("sac", "m"), "book": ("livre", "m"), "photo": ("photo", "f"), "box": ("boîte", "f"),
    "umbrella": ("parapluie", "m"), "suitcase": ("valise", "f"), "map": ("carte", "f"),
    "help": ("aide", "f"), "patience": ("patience", "f"), "time": ("temps", "m"),
}
DETERMINERS = {  # determiner -> (before a masculine noun, before a feminine noun)
    "def": ("le", "la"), "indef": ("un", "une"),
    "mon": ("mon", "ma"), "ton": ("ton", "ta"), "votre": ("votre", "votre"),
}
PARTICIPLES = {"see": "vu", "find": "trouvé", "bring": "apporté", "lose": "perdu", "take": "pris",
               "forget": "oublié", "hide": "caché", "read": "lu", "buy": "acheté", "open": "ouvert"}
ADJECTIVES = {  # slot value -> (masculine, feminine, masculine plural)
    "tired": ("fatigué", "fatiguée", "fatigués"), "ready": ("prêt", "prête", "prêts"),
    "sure": ("sûr", "sûre", "sûrs"), "hungry": ("affamé", "affamée", "affamés"),
    "angry": ("en colère",) * 3, "happy": ("heureux", "heureuse", "heureux"),
    "busy": ("occupé", "occupée", "occupés"), "alone": ("seul", "seule", "seuls"),
    "sick": ("malade", "malade", "malades"), "worried": ("inquiet", "inquiète", "inquiets"),
    "surprised": ("surpris", "surprise", "surpris"), "disappointed": ("déçu", "déçue", "déçus"),
    "nervous": ("nerveux", "nerveuse", "nerveux"),
}
PERSONS = {"brother": "mon frère", "sister": "ma sœur", "doctor": "le médecin",
           "neighbour": "notre voisin", "lawyer": "l'avocat", "wife": "sa femme",
           "husband": "son mari", "boss": "le patron"}


class French(Language):
    code = "fr"
    nouns = NOUNS
    phenomena = ("formality", "speaker_gender", "addressee_gender", "addressee_number")
    titles = {"mr": "monsieur", "mrs": "madame", "ms": "madame"}
    vocative_words = {"sir": "monsieur", "madam": "madame", "man": "mec", "dude": "mec",
                      "buddy": "mon pote", "girl": "ma belle", "lady": "jeune fille",
                      "ladies": "mesdames et messieurs", "guys": "les gars"}
    lexicon = {
        "inf": {"go_home": "rentrer à la maison", "help": "aider", "stay": "rester ici",
                "leave": "partir maintenant", "talk": "lui parler", "sleep": "dormir un peu",
                "eat": "manger quelque chose", "dance": "danser", "wait": "attendre",
                "try_again": "réessayer", "take_car": "prendre la voiture",
                "police": "appeler la police", "doctor": "voir un médecin",
                "come_along": "venir avec nous", "film": "regarder un film",
                "coffee": "prendre un café"},
        "req": {"seat": "prendre place", "moment": "patienter un instant", "sign": "signer ici",
                "come": "venir avec moi", "door": "fermer la porte",
                "form": "remplir ce formulaire", "louder": "parler un peu plus fort"},
        "when": {"yesterday": "hier", "last_night": "hier soir", "morning": "ce matin",
                 "sunday": "dimanche", "party": "à la fête"},
        "later": {"tomorrow": "demain", "tonight": "ce soir", "later": "plus tard",
                  "monday": "lundi", "hour": "dans une heure"},
        "hour": {"five": "cinq", "six": "six", "seven": "sept", "eight": "huit", "nine": "neuf",
                 "ten": "dix"},
        "drink": {"tea": "un thé", "coffee": "un café", "wine": "un verre de vin",
                  "drink": "quelque chose à boire"},
        "he": {MASCULINE: "il", FEMININE: "elle"},
    }
    frames = {
        # address
        "did_you_verb": "{pro} {v2:avoir} {verb} {obj:def}?",
        "have_you_verb_my": "{pro} {v2:avoir} {verb} {obj:mon}?",
        "is_this_yours": "C'est {obj:ton}?",
        "where_is_yours": "Où est {obj:ton}?",
        "do_you_have": "{pro} {v2:avoir} {obj:def}?",
        "do_you_need": "{pro} {v2:avoir} besoin d'{obj:indef}?",
        "are_you_adj": "{pro} {v2:être} {adj:2}?",
        "were_you_adj": "{pro} {v2:étais} {adj:2}?",
        "you_were_right": "{pro} {v2:avais} raison là-dessus.",
        "where_were_you": "Où est-ce que {pro} {v2:étais} {when}?",
        "what_do_you_want": "Qu'est-ce que {pro} {v2:vouloir}?",
        "where_do_you_live": "Où est-ce que {pro} {v2:habiter}?",
        "where_do_you_work": "Où est-ce que {pro} {v2:travailler}?",
        "what_do_you_think": "Qu'est-ce que {pro} en {v2:penser}?",
        "do_you_understand": "{pro} {v2:comprendre}?",
        "can_you_hear_me": "{pro} m'{v2:entendre}?",
        "what_are_you_doing": "Qu'est-ce que {pro} {v2:faire} ici?",
        "do_you_know_person": "{pro} {v2:connaître} {person}?",
        "do_you_want_to": "{pro} {v2:vouloir} {inf}?",
        "can_you_inf": "{pro} {v2:pouvoir} {inf}?",
        "maybe_you_should": "{pro} {v2:devrais} peut-être {inf}.",
        "would_you_like_to": "{pro} {v2:voudrais} {inf}?",
        "did_you_want_to": "{pro} {v2:voulais} {inf}?",
        "talk_to_you": "Je veux {te} parler.",
        "have_for_you": "J'ai {obj:indef} pour {toi}.",
        "call_you": "Je {te} rappelle {later}.",
        "help_you": "Je peux {te} donner un coup de main.",
        "how_are_you": "{pro} {v2:aller} bien?",
        "did_you_sleep": "{pro} {v2:avoir} bien dormi?",
        "have_you_eaten": "{pro} {v2:avoir} déjà mangé?",
        "how_did_you_know": "Comment est-ce que {pro} le {v2:savais}?",
        "why_lie": "Pourquoi est-ce que {pro} m'{v2:avoir} menti?",
        "why_not_call": "Pourquoi est-ce que {pro} n'{v2:avoir} pas appelé?",
        "you_promised": "{pro} l'{v2:avoir} promis.",
        "great_job": "{pro} {v2:avoir} fait du très bon travail.",
        "thanks_for_your": "Merci pour {thing:ton}.",
        "sit_down": "{imp:asseoir}.",
        "come_here": "{imp:venir} ici.",
        "wait_here": "{imp:attendre} ici.",
        "listen_to_me": "{imp:écouter}.",
        "tell_truth": "{imp:dire} la vérité.",
        "close_door": "{imp:fermer} la porte.",
        "give_me": "{imp:donner} {obj:def}.",
        "take_obj": "{imp:prendre} {obj:def}.",
        "help_me": "{imp:aider}.",
        "dont_worry": "{imp:inquiéter}.",
        # speaker
        "i_verbed": "J'ai {verb} {obj:def}.",
        "i_verbed_your": "J'ai {verb} {obj:ton}.",
        "i_was_adj": "J'étais {adj:1}.",
        "im_adj": "Je suis {adj:1}.",
        "i_wanted_to": "Je voulais {inf}.",
        "id_like_to": "J'aimerais {inf}.",
        "i_should": "Je devrais {inf}.",
        "couldnt_find": "Je n'arrivais pas à trouver {obj:mon}.",
        "went_home": "Je suis {sp:rentré:rentrée} tôt.",
        "didnt_know": "Je ne le savais pas.",
        "i_forgot": "J'ai oublié.",
        "thought_so": "C'est bien ce que je pensais.",
        "did_everything": "J'ai fait tout ce que j'ai pu.",
        "thought_you_adj": "Je pensais que {pro} {v2:étais} {adj:2}.",
        "told_you": "Je {te} l'avais dit.",
        # te elides before ai (je t'ai vue); the formal markers then also hold "ai", which
        # follows only an unelided object pronoun such as vous
        "saw_you": "Je {te} ai {you:vu:vue:vus} {when}.",
        "waited_for_you": "Je {te} ai {you:attendu:attendue:attendus}.",
        "believed_you": "Je {te} croyais.",
        "worried_about_you": "Je me suis {sp:inquiété:inquiétée} pour {toi}.",
        "proud_of_you": "Je suis {sp:fier:fière} de {toi}.",
        "missed_you": "{pro} m'{v2:avoir} manqué.",
        # neutral
        "where_is": "Où est {obj:def}?",
        "on_table": "{obj:def} est sur la table.",
        "it_on_table": "{obj:agree:il:elle} est sur la table.",
        "it_gone": "{obj:agree:il:elle} a disparu.",
        "cant_find_it": "Je ne {obj:agree:le:la} trouve pas.",
        "found_it": "{pro} l'{v2:avoir} {obj:agree:trouvé:trouvée}?",
        "take_it": "{imp:prendre}-{obj:agree:le:la}.",
        "obj_gone": "{obj:def} a disparu.",
        "we_need": "On a besoin d'{obj:indef}.",
        "train_leaves": "Le train part à {hour} heures.",
        "he_verbed": "{he} a {verb} {obj:def}.",
        "he_is_adj": "{he} est {adj:3}.",
        "he_wants_to": "{he} veut {inf}.",
        "where_is_person": "Où est {person}?",
        "dont_know": "Je ne sais pas.",
        "getting_late": "Il se fait tard.",
        "have_to_go": "On doit y aller.",
        "what_time": "Quelle heure est-il?",
        "raining": "Il pleut encore.",
        "bad_idea": "Ce n'est pas une bonne idée.",
        "lets_go": "Allons-y.",
        "im_sorry": "Je suis {sp:désolé:désolée}.",
        "someone_door": "Il y a quelqu'un à la porte.",
        "yes": "Oui.",
        "no": "Non.",
        "okay": "D'accord.",
        # others
        "neighbour_has": "Notre voisin a {obj:def}.",
        "sister_looks_for": "Ma sœur cherche {obj:def}.",
        "belongs_to_brother": "{obj:def} appartient à mon frère.",
        "gave_to_sister": "J'ai donné {obj:def} à ma sœur.",
        # greeting
        "greet_evening": "Bonsoir, {voc}.",
        "greet_morning": "Bonjour, {voc}.",
        "greet_hello": "Salut, {voc}.",
        "thank_voc": "Merci, {voc}.",
        "excuse_voc": "Pardon, {voc}.",
        "whats_up": "Qu'est-ce qui se passe, {voc}?",
        "certainly": "Bien sûr, {voc}.",
        "as_you_wish": "Comme {pro} {v2:vouloir}, {voc}.",
        "forgive_me": "{sp:Désolé:Désolée}, {voc}.",
        "grab_beer": "Je vais prendre une bière, {voc}.",
        # styled
        "calm_down": "{imp:calmer}.",
        "look_this": "{imp:regarder} ça.",
        "kidding": "{pro} {v2:plaisanter}.",
        "disturb": "{sp:Désolé:Désolée} de {te} déranger.",
        "honour": "C'est un honneur de {te} rencontrer.",
        "nice_meet": "{sp:Ravi:Ravie} de {te} rencontrer.",
        "offer_drink": "Je peux {te} servir {drink}?",
        "could_you_req": "{pro} {v2:pourrais} {req}, s'il {te} plaît?",
        "grateful": "Je {te} suis très {sp:reconnaissant:reconnaissante}.",
        "help_yourself": "{imp:servir}.",
        "amazing": "C'est incroyable!",
        "disagree": "Je ne suis pas d'accord.",
        "see_you": "À plus tard.",
        "splendid": "Magnifique.",
        "proceed": "Continuons.",
        "no_idea": "Je n'en ai aucune idée.",
        "really_good": "C'est vraiment bon.",
        "long_day": "La journée a été longue.",
        "no_problem": "Pas de problème.",
        "good_idea": "Bonne idée.",
        "very_well": "Très bien.",
        "good_night": "Bonne nuit.",
        # self: the gendered words follow the `self` slot, never the situation
        "self_little": "Je ne suis plus {self:une petite fille:un petit garçon}.",
        "self_grown": "Je suis {self:une femme adulte:un homme adulte}.",
        "self_kind": "Je ne suis pas {self:ce genre de fille:ce genre de mec}.",
        "self_look_like": "J'ai l'air d'{self:une serveuse:un serveur}?",
        "self_old": "Je ne suis qu'{self:une vieille femme:un vieil homme}.",
        "self_insist": "En tant que {self:dame:gentleman}, je dois insister.",
        "self_lucky": "Je suis {self:une femme chanceuse:un homme chanceux}.",
        "self_big": "Je suis {self:une grande fille:un grand garçon}, je vais gérer.",
        "self_mother": "Je suis {self:mère:père}, je m'inquiète.",
        # group
        "group_morning": "Bonjour à tous.",
        "group_attention": "Mesdames et messieurs, puis-je avoir votre attention?",
        "group_listen": "Les gars, écoutez!",
        "thank_all": "Merci d'être {you:venu:venue:venus}.",
        "all_ready": "{pro} {v2:être} tous {you:prêt:prête:prêts}?",
    }

    def render_pattern(self, pattern, slots, situation):
        return _ELISION.sub(r"\1'", super().render_pattern(pattern, slots, situation))

    # Pronouns of the listener, by case.
    def h_pro(self, slots, s):
        return PRONOUNS["pro"][_address(s)]

    def h_te(self, slots, s):
        return PRONOUNS["te"][_address(s)]

    def h_toi(self, slots, s):
        return PRONOUNS["toi"][_address(s)]

    def h_v2(self, slots, s, verb):
        return VERBS_2ND[verb][_address(s)]

    def h_imp(self, slots, s, verb):
        return IMPERATIVES[verb][_address(s)]

    # Agreement: a formal listener is still one person, so vous agrees with their gender.
    def h_you(self, slots, s, *forms):
        return _agree(forms, s.addressee)

    def h_sp(self, slots, s, masculine, feminine):
        return feminine if s.speaker == FEMININE else masculine

    def h_adj(self, slots, s, agreement):
        """Predicative adjective agreeing with 1 the speaker, 2 the listener, 3 the `he` slot."""
        who = {"1": s.speaker, "2": s.addressee, "3": slots.get("he")}[agreement]
        return _agree(ADJECTIVES[slots["adj"]], who)

    # Slots.
    def _noun_phrase(self, key, s, determiner):
        noun, gender = NOUNS[key]
        if determiner == "ton" and _address(s):
            determiner = "votre"
        masculine, feminine = DETERMINERS[determiner]
        # ma/ta before a vowel become mon/ton (ton aide); elsewhere gender decides.
        elided = determiner in ("mon", "ton") and noun[0] in VOWELS
        return f"{masculine if gender == 'm' or elided else feminine} {noun}"

    def h_obj(self, slots, s, determiner, *args):
        if determiner == "agree":  # a pronoun of the object noun's gender: {obj:agree:m:f}
            return args["mf".index(NOUNS[slots["obj"]][1])]
        return self._noun_phrase(slots["obj"], s, determiner)

    def h_thing(self, slots, s, determiner):
        return self._noun_phrase(slots["thing"], s, determiner)

    def h_verb(self, slots, s):
        return PARTICIPLES[slots["verb"]]

    def h_person(self, slots, s):
        return PERSONS[slots["person"]]


FRENCH = French()
