"""Russian: ты versus вы, and gender in the past tense.

One listener addressed informally is ты; a formal listener and any group are вы, which
takes plural verbs and short adjectives even for one person (вы были правы). So the past
tense and short adjectives show the speaker's gender in the first person (я видел / я
видела) and the listener's only after ты (ты видел / ты видела): labels.py finds by
rendering that вы hides both the listener's gender and, between formal one and many, the
number. Subtitles write вы in lower case mid-sentence, and English names in Cyrillic.
"""
from __future__ import annotations

from mtcue.data.synth.situation import FEMININE, FORMAL, GROUP, MASCULINE, Situation
from mtcue.data.synth.template import Language


def _address(s: Situation) -> int:
    """Column of the address tables: 0 ты (informal, one), 1 вы (formal, or many)."""
    return 0 if s.formality != FORMAL and not s.plural else 1


def _listener(s: Situation) -> str:
    """Whom second-person forms agree with: вы agrees as a group."""
    return GROUP if _address(s) else s.addressee


def _agree(forms: tuple[str, ...], who: str) -> str:
    """Pick from (masculine, feminine, plural) for MASCULINE/FEMININE/GROUP."""
    return forms[(MASCULINE, FEMININE, GROUP).index(who)]


PRONOUNS = {  # case -> (ты, вы)
    "pro": ("ты", "вы"), "acc": ("тебя", "вас"), "gen": ("тебя", "вас"), "dat": ("тебе", "вам"),
    "ins": ("тобой", "вами"),
}
PAST = {  # verb -> (masculine, feminine, plural)
    "быть": ("был", "была", "были"), "отдать": ("отдал", "отдала", "отдали"), "хотеть": ("хотел", "хотела", "хотели"),
    "мочь": ("мог", "могла", "могли"), "смочь": ("смог", "смогла", "смогли"),
    "думать": ("думал", "думала", "думали"), "знать": ("знал", "знала", "знали"),
    "уйти": ("ушёл", "ушла", "ушли"), "забыть": ("забыл", "забыла", "забыли"),
    "сделать": ("сделал", "сделала", "сделали"), "говорить": ("говорил", "говорила", "говорили"),
    "видеть": ("видел", "видела", "видели"), "ждать": ("ждал", "ждала", "ждали"),
    "верить": ("верил", "верила", "верили"),
    "волноваться": ("волновался", "волновалась", "волновались"),
    "скучать": ("скучал", "скучала", "скучали"), "спать": ("спал", "спала", "спали"),
    "поесть": ("поел", "поела", "поели"), "солгать": ("солгал", "солгала", "солгали"),
    "позвонить": ("позвонил", "позвонила", "позвонили"),
    "обещать": ("обещал", "обещала", "обещали"),
    "поработать": ("поработал", "поработала", "поработали"),
    "прийти": ("пришёл", "пришла", "пришли"), "найти": ("нашёл", "нашла", "нашли"),
    "принести": ("принёс", "принесла", "принесли"), "потерять": ("потерял", "потеряла", "потеряли"),
    "взять": ("взял", "взяла", "взяли"), "спрятать": ("спрятал", "спрятала", "спрятали"),
    "прочитать": ("прочитал", "прочитала", "прочитали"), "купить": ("купил", "купила", "купили"),
    "открыть": ("открыл", "открыла", "открыли"),
}
PRESENT_2ND = {  # verb -> (ты, вы)
    "хотеть": ("хочешь", "хотите"), "жить": ("живёшь", "живёте"),
    "работать": ("работаешь", "работаете"), "думать": ("думаешь", "думаете"),
    "понимать": ("понимаешь", "понимаете"), "слышать": ("слышишь", "слышите"),
    "делать": ("делаешь", "делаете"), "знать": ("знаешь", "знаете"), "мочь": ("можешь", "можете"),
    "чувствовать": ("чувствуешь", "чувствуете"), "шутить": ("шутишь", "шутите"),
}
IMPERATIVES = {  # verb -> (ты, вы)
    "садиться": ("садись", "садитесь"), "идти": ("иди", "идите"),
    "подождать": ("подожди", "подождите"), "послушать": ("послушай", "послушайте"),
    "сказать": ("скажи", "скажите"), "закрыть": ("закрой", "закройте"), "дать": ("дай", "дайте"),
    "взять": ("возьми", "возьмите"), "помочь": ("помоги", "помогите"),
    "волноваться": ("волнуйся", "волнуйтесь"), "успокоиться": ("успокойся", "успокойтесь"),
    "посмотреть": ("посмотри", "посмотрите"), "угощаться": ("угощайся", "угощайтесь"),
    "извинить": ("извини", "извините"),
}
NOUNS = {  # slot value -> (nominative, accusative, gender m/f/n); masculine ones are inanimate
    "letter": ("письмо", "письмо", "n"), "key": ("ключ", "ключ", "m"),
    "ticket": ("билет", "билет", "m"), "phone": ("телефон", "телефон", "m"),
    "passport": ("паспорт", "паспорт", "m"), "wallet": ("бумажник", "бумажник", "m"),
    "bag": ("сумка", "сумку", "f"), "book": ("книга", "книгу", "f"),
    "photo": ("фотография", "фотографию", "f"), "box": ("коробка", "коробку", "f"),
    "umbrella": ("зонт", "зонт", "m"), "suitcase": ("чемодан", "чемодан", "m"),
    "map": ("карта", "карту", "f"), "help": ("помощь", "помощь", "f"),
    "patience": ("терпение", "терпение", "n"), "time": ("время", "время", "n"),
}
POSSESSIVES = {  # lemma -> (m nom/acc, f nom, f acc, n nom/acc)
    "мой": ("мой", "моя", "мою", "моё"), "твой": ("твой", "твоя", "твою", "твоё"),
    "ваш": ("ваш", "ваша", "вашу", "ваше"), "свой": ("свой", "своя", "свою", "своё"),
}
VERBS = {"see": "видеть", "find": "найти", "bring": "принести", "lose": "потерять",
         "take": "взять", "forget": "забыть", "hide": "спрятать", "read": "прочитать",
         "buy": "купить", "open": "открыть"}
ADJECTIVES = {  # slot value -> short form (masculine, feminine, plural)
    "tired": ("измотан", "измотана", "измотаны"), "ready": ("готов", "готова", "готовы"),
    "sure": ("уверен", "уверена", "уверены"), "hungry": ("голоден", "голодна", "голодны"),
    "angry": ("зол", "зла", "злы"), "happy": ("счастлив", "счастлива", "счастливы"),
    "busy": ("занят", "занята", "заняты"), "alone": ("один", "одна", "одни"),
    "sick": ("болен", "больна", "больны"),
    "worried": ("обеспокоен", "обеспокоена", "обеспокоены"),
    "surprised": ("удивлён", "удивлена", "удивлены"),
    "disappointed": ("разочарован", "разочарована", "разочарованы"),
    "nervous": ("взволнован", "взволнована", "взволнованы"),
}
PERSONS = {  # slot value -> (nominative, accusative)
    "brother": ("мой брат", "моего брата"), "sister": ("моя сестра", "мою сестру"),
    "doctor": ("врач", "врача"), "neighbour": ("наш сосед", "нашего соседа"),
    "lawyer": ("адвокат", "адвоката"), "wife": ("его жена", "его жену"),
    "husband": ("её муж", "её мужа"), "boss": ("начальник", "начальника"),
}
CYRILLIC = {  # english.FIRST_NAMES and SURNAMES as Russian subtitles spell them
    "Anna": "Анна", "Maria": "Мария", "Kate": "Кейт", "Emma": "Эмма", "Laura": "Лора",
    "Sarah": "Сара", "Julia": "Джулия", "Lucy": "Люси", "Helen": "Хелен", "Clara": "Клара",
    "Nina": "Нина", "Alice": "Элис", "Eva": "Ева", "Rosa": "Роза", "Sophie": "Софи",
    "Grace": "Грейс", "Tom": "Том", "John": "Джон", "Mark": "Марк", "Peter": "Питер",
    "David": "Дэвид", "Jack": "Джек", "Paul": "Пол", "Adam": "Адам", "Daniel": "Дэниел",
    "Max": "Макс", "Leo": "Лео", "Simon": "Саймон", "Frank": "Фрэнк", "Victor": "Виктор",
    "Oscar": "Оскар", "Henry": "Генри",
    "Harris": "Харрис", "Carter": "Картер", "Bennett": "Беннетт", "Miller": "Миллер",
    "Wright": "Райт", "Novak": "Новак", "Berg": "Берг", "Hale": "Хейл", "Fischer": "Фишер",
    "Morgan": "Морган", "Reed": "Рид", "Walsh": "Уолш", "Grant": "Грант", "Keller": "Келлер",
    "Lang": "Ланг", "Foster": "Фостер", "Hayes": "Хейс", "Brooks": "Брукс",
}


class Russian(Language):
    code = "ru"
    nouns = NOUNS
    phenomena = ("formality", "speaker_gender", "addressee_gender", "addressee_number")
    titles = {"mr": "мистер", "mrs": "миссис", "ms": "мисс"}
    vocative_words = {"sir": "сэр", "madam": "мэм", "man": "чувак", "dude": "чувак",
                      "buddy": "приятель", "girl": "подруга", "lady": "юная леди",
                      "ladies": "дамы и господа", "guys": "ребята"}
    lexicon = {
        "inf": {"go_home": "пойти домой", "help": "помочь", "stay": "остаться здесь",
                "leave": "уйти прямо сейчас", "talk": "поговорить с ним",
                "sleep": "немного поспать", "eat": "что-нибудь съесть", "dance": "потанцевать",
                "wait": "подождать", "try_again": "попробовать ещё раз",
                "take_car": "взять машину", "police": "вызвать полицию",
                "doctor": "сходить к врачу", "come_along": "пойти с нами",
                "film": "посмотреть фильм", "coffee": "выпить кофе"},
        "req": {"seat": "присесть", "moment": "подождать минутку", "sign": "расписаться здесь",
                "come": "пойти со мной", "door": "закрыть дверь", "form": "заполнить эту форму",
                "louder": "говорить погромче"},
        "when": {"yesterday": "вчера", "last_night": "вчера вечером", "morning": "сегодня утром",
                 "sunday": "в воскресенье", "party": "на вечеринке"},
        "later": {"tomorrow": "завтра", "tonight": "сегодня вечером", "later": "позже",
                  "monday": "в понедельник", "hour": "через час"},
        "hour": {"five": "пять", "six": "шесть", "seven": "семь", "eight": "восемь",
                 "nine": "девять", "ten": "десять"},
        "drink": {"tea": "чаю", "coffee": "кофе", "wine": "бокал вина",
                  "drink": "что-нибудь выпить"},
        "he": {MASCULINE: "он", FEMININE: "она"},
    }
    frames = {
        # address
        "did_you_verb": "{pro} {verb:past2} {obj:acc}?",
        "have_you_verb_my": "{pro} {verb:past2} {obj:мой:acc}?",
        "is_this_yours": "Это {obj:твой:nom}?",
        "where_is_yours": "Где {obj:твой:nom}?",
        "do_you_have": "{obj:nom} у {gen}?",
        "do_you_need": "{dat} {obj:agree:нужен:нужна:нужно} {obj:nom}?",
        "are_you_adj": "{pro} {adj:2}?",
        "were_you_adj": "{pro} {past2:быть} {adj:2}?",
        "you_were_right": "{pro} {past2:быть} {you:прав:права:правы} насчёт этого.",
        "where_were_you": "Где {pro} {past2:быть} {when}?",
        "what_do_you_want": "Чего {pro} {pres2:хотеть}?",
        "where_do_you_live": "Где {pro} {pres2:жить}?",
        "where_do_you_work": "Где {pro} {pres2:работать}?",
        "what_do_you_think": "Что {pro} об этом {pres2:думать}?",
        "do_you_understand": "{pro} {pres2:понимать}?",
        "can_you_hear_me": "{pro} меня {pres2:слышать}?",
        "what_are_you_doing": "Что {pro} здесь {pres2:делать}?",
        "do_you_know_person": "{pro} {pres2:знать} {person:acc}?",
        "do_you_want_to": "{pro} {pres2:хотеть} {inf}?",
        "can_you_inf": "{pro} {pres2:мочь} {inf}?",
        "maybe_you_should": "Может, {dat} стоит {inf}.",
        "would_you_like_to": "{pro} бы {past2:хотеть} {inf}?",
        "did_you_want_to": "{pro} {past2:хотеть} {inf}?",
        "talk_to_you": "Я хочу с {ins} поговорить.",
        "have_for_you": "У меня есть {obj:nom} для {gen}.",
        "call_you": "Я позвоню {dat} {later}.",
        "help_you": "Я могу {dat} помочь.",
        "how_are_you": "Как {pro} себя {pres2:чувствовать}?",
        "did_you_sleep": "{pro} хорошо {past2:спать}?",
        "have_you_eaten": "{pro} уже {past2:поесть}?",
        "how_did_you_know": "Откуда {pro} {past2:знать}?",
        "why_lie": "Почему {pro} мне {past2:солгать}?",
        "why_not_call": "Почему {pro} не {past2:позвонить}?",
        "you_promised": "{pro} {past2:обещать}.",
        "great_job": "{pro} отлично {past2:поработать}.",
        "thanks_for_your": "Спасибо за {thing:твой:acc}.",
        "sit_down": "{imp:садиться}.",
        "come_here": "{imp:идти} сюда.",
        "wait_here": "{imp:подождать} здесь.",
        "listen_to_me": "{imp:послушать} меня.",
        "tell_truth": "{imp:сказать} мне правду.",
        "close_door": "{imp:закрыть} дверь.",
        "give_me": "{imp:дать} мне {obj:acc}.",
        "take_obj": "{imp:взять} {obj:acc}.",
        "help_me": "{imp:помочь} мне.",
        "dont_worry": "Не {imp:волноваться}.",
        # speaker
        "i_verbed": "Я {verb:past1} {obj:acc}.",
        "i_verbed_your": "Я {verb:past1} {obj:твой:acc}.",
        "i_was_adj": "Я {past1:быть} {adj:1}.",
        "im_adj": "Я {adj:1}.",
        "i_wanted_to": "Я {past1:хотеть} {inf}.",
        "id_like_to": "Я бы {past1:хотеть} {inf}.",
        "i_should": "Мне стоит {inf}.",
        "couldnt_find": "Я не {past1:смочь} найти {obj:свой:acc}.",
        "went_home": "Я рано {past1:уйти} домой.",
        "didnt_know": "Я этого не {past1:знать}.",
        "i_forgot": "Я {past1:забыть}.",
        "thought_so": "Я так и {past1:думать}.",
        "did_everything": "Я {past1:сделать} всё, что {past1:мочь}.",
        "thought_you_adj": "Я {past1:думать}, что {pro} {adj:2}.",
        "told_you": "Я же {dat} {past1:говорить}.",
        "saw_you": "Я {past1:видеть} {acc} {when}.",
        "waited_for_you": "Я {past1:ждать} {acc}.",
        "believed_you": "Я {dat} {past1:верить}.",
        "worried_about_you": "Я {past1:волноваться} за {acc}.",
        "proud_of_you": "Я горжусь {ins}.",
        "missed_you": "Я {past1:скучать} по {dat}.",
        # neutral
        "where_is": "Где {obj:nom}?",
        "on_table": "{obj:nom} на столе.",
        "it_on_table": "{obj:agree:он:она:оно} на столе.",
        "it_gone": "{obj:agree:он:она:оно} {obj:agree:пропал:пропала:пропало}.",
        "cant_find_it": "Я не могу {obj:agree:его:её:его} найти.",
        "found_it": "{pro} {verb:past2} {obj:agree:его:её:его}?",
        "take_it": "{imp:взять} {obj:agree:его:её:его}.",
        "obj_gone": "{obj:nom} {obj:agree:пропал:пропала:пропало}.",
        "we_need": "Нам {obj:agree:нужен:нужна:нужно} {obj:nom}.",
        "train_leaves": "Поезд отправляется в {hour}.",
        "he_verbed": "{he} {verb:past3} {obj:acc}.",
        "he_is_adj": "{he} {adj:3}.",
        "he_wants_to": "{he} хочет {inf}.",
        "where_is_person": "Где {person:nom}?",
        "dont_know": "Я не знаю.",
        "getting_late": "Уже поздно.",
        "have_to_go": "Нам пора идти.",
        "what_time": "Который час?",
        "raining": "Опять идёт дождь.",
        "bad_idea": "Это не лучшая идея.",
        "lets_go": "Пойдём.",
        "im_sorry": "Мне жаль.",
        "someone_door": "Кто-то стоит у двери.",
        "yes": "Да.",
        "no": "Нет.",
        "okay": "Хорошо.",
        # others
        "neighbour_has": "{obj:nom} у нашего соседа.",
        "sister_looks_for": "Моя сестра ищет {obj:acc}.",
        "belongs_to_brother": "{obj:nom} принадлежит моему брату.",
        "gave_to_sister": "Я {past1:отдать} {obj:acc} моей сестре.",
        # greeting
        "greet_evening": "Добрый вечер, {voc}.",
        "greet_morning": "Доброе утро, {voc}.",
        "greet_hello": "Привет, {voc}.",
        "thank_voc": "Спасибо, {voc}.",
        "excuse_voc": "Прошу прощения, {voc}.",
        "whats_up": "Что случилось, {voc}?",
        "certainly": "Конечно, {voc}.",
        "as_you_wish": "Как {pres2:хотеть}, {voc}.",
        "forgive_me": "{sp:Виноват:Виновата}, {voc}.",
        "grab_beer": "Схожу за пивом, {voc}.",
        # styled
        "calm_down": "{imp:успокоиться}.",
        "look_this": "{imp:посмотреть} на это.",
        "kidding": "{pro}, наверное, {pres2:шутить}.",
        "disturb": "{imp:извинить}, что беспокою {acc}.",
        "honour": "Для меня честь познакомиться с {ins}.",
        "nice_meet": "{sp:Рад:Рада} познакомиться с {ins}.",
        "offer_drink": "Могу я предложить {dat} {drink}?",
        "could_you_req": "{pro} не {past2:мочь} бы {req}?",
        "grateful": "Я {dat} очень {sp:благодарен:благодарна}.",
        "help_yourself": "{imp:угощаться}.",
        "amazing": "Это потрясающе!",
        "disagree": "Я не {sp:согласен:согласна}.",
        "see_you": "До встречи.",
        "splendid": "Великолепно.",
        "proceed": "Продолжим.",
        "no_idea": "Понятия не имею.",
        "really_good": "Это действительно хорошо.",
        "long_day": "Это был долгий день.",
        "no_problem": "Без проблем.",
        "good_idea": "Хорошая идея.",
        "very_well": "Ну ладно.",
        "good_night": "Спокойной ночи.",
        # self: the gendered words follow the `self` slot, never the situation
        "self_little": "Я уже не {self:маленькая девочка:маленький мальчик}.",
        "self_grown": "Я {self:взрослая женщина:взрослый мужчина}.",
        "self_kind": "Я не {self:такая девушка:такой парень}.",
        "self_look_like": "Я что, {self:похожа на официантку:похож на официанта}?",
        "self_old": "Я всего лишь {self:старая женщина:старик}.",
        "self_insist": "{self:Как леди, я вынуждена:Как джентльмен, я вынужден} настаивать.",
        "self_lucky": "Я {self:счастливая женщина:счастливый человек}.",
        "self_big": "Я уже {self:большая девочка:большой мальчик}, я справлюсь.",
        "self_mother": "Я {self:мать:отец}, я волнуюсь.",
        # group
        "group_morning": "Всем доброе утро.",
        "group_attention": "Дамы и господа, прошу внимания.",
        "group_listen": "Ребята, послушайте!",
        "thank_all": "Спасибо, что {pro} {past2:прийти}.",
        "all_ready": "{pro} все {you:готов:готова:готовы}?",
    }

    def vocative(self, key: str) -> str:
        kind, _, name = key.partition(":")
        return super().vocative(f"{kind}:{CYRILLIC[name]}" if name else key)

    # Pronouns of the listener, by case.
    def h_pro(self, slots, s):
        return PRONOUNS["pro"][_address(s)]

    def h_acc(self, slots, s):
        return PRONOUNS["acc"][_address(s)]

    def h_gen(self, slots, s):
        return PRONOUNS["gen"][_address(s)]

    def h_dat(self, slots, s):
        return PRONOUNS["dat"][_address(s)]

    def h_ins(self, slots, s):
        return PRONOUNS["ins"][_address(s)]

    # Verbs and words agreeing with the listener or the speaker.
    def h_pres2(self, slots, s, verb):
        return PRESENT_2ND[verb][_address(s)]

    def h_past2(self, slots, s, verb):
        return _agree(PAST[verb], _listener(s))

    def h_imp(self, slots, s, verb):
        return IMPERATIVES[verb][_address(s)]

    def h_you(self, slots, s, *forms):
        return _agree(forms, _listener(s))

    def h_past1(self, slots, s, verb):
        return _agree(PAST[verb], s.speaker)

    def h_sp(self, slots, s, masculine, feminine):
        return feminine if s.speaker == FEMININE else masculine

    def h_adj(self, slots, s, agreement):
        """Short adjective agreeing with 1 the speaker, 2 the listener, 3 the `he` slot."""
        who = {"1": s.speaker, "2": _listener(s), "3": slots.get("he")}[agreement]
        return _agree(ADJECTIVES[slots["adj"]], who)

    # Slots.
    def h_verb(self, slots, s, form):
        who = {"past1": s.speaker, "past2": _listener(s), "past3": slots.get("he")}[form]
        return _agree(PAST[VERBS[slots["verb"]]], who)

    def _noun_phrase(self, key, s, args):
        nominative, accusative, gender = NOUNS[key]
        *determiner, case = args
        noun = nominative if case == "nom" else accusative
        if not determiner:
            return noun
        lemma = determiner[0]
        if lemma == "твой" and _address(s):
            lemma = "ваш"
        column = {"m": 0, "n": 3}.get(gender, 1 if case == "nom" else 2)
        return f"{POSSESSIVES[lemma][column]} {noun}"

    def h_obj(self, slots, s, *args):
        if args[0] == "agree":  # a word agreeing with the object noun: {obj:agree:m:f:n}
            return args[1 + "mfn".index(NOUNS[slots["obj"]][2])]
        return self._noun_phrase(slots["obj"], s, args)

    def h_thing(self, slots, s, *args):
        return self._noun_phrase(slots["thing"], s, args)

    def h_person(self, slots, s, case):
        return PERSONS[slots["person"]][("nom", "acc").index(case)]


RUSSIAN = Russian()
