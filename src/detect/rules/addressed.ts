import { alt, B, E, gap, rx, words, type PatternRule } from './pattern';

/**
 * Text addressed to the assistant: a memory is what the assistant knows about the world, written by it,
 * about the user and their work. Text that speaks *to* the model ("note for the AI", "ignore previous
 * instructions", a fake `<system>` tag, "you are now in developer mode") is an instruction planted for
 * the next session to obey. English, German, French, Spanish, Italian, Portuguese, Dutch, Polish,
 * Russian, Chinese and Japanese.
 */

const AI = alt(
  'ai', 'a\\.i\\.', 'ai[- ]assistants?', 'assistants?', 'ai[- ]agents?', 'llms?', 'language models?', 'large language models?', 'chat ?bots?', 'claude', 'chatgpt', 'gpt(?:-?\\d)?',
  'ki', 'ki-assistent(?:en|in)?', 'assistent(?:en|in)?', 'ia', 'assistante?', "l'ia", "l'assistant(?:e)?", 'asistente', 'assistente', 'ai-assistent', 'assistent',
  'asystent(?:a)?', 'ии', 'ассистент(?:у|а)?', 'нейросет[ьи]',
);
/** After the AI's name: a colon, a dash, the line's end, or "reading this" — not "the AI team". */
const AI_END = "(?= ?[:,;\\-—–(\\n]|$| (?:reading|processing|handling|working|that|who|which|here|only|please|must|should|you|in charge|on duty|lisant|qui|que|che|der|die|das))";
const DETERMINER = alt('the', 'any', 'all', 'an?', 'every', 'our', 'my', 'den', 'die', 'das', 'der', 'dem', 'le', 'la', 'les', 'el', 'los', 'las', 'il', 'lo', 'gli', 'o', 'os', 'as', 'de', 'het', 'tout', 'toute', 'jede[nrms]?');
const NOTE = alt(
  'note', 'notes', 'message', 'instructions?', 'reminder', 'attention', 'notice', 'memo', 'directive', 'p\\.?s\\.?', 'fyi',
  'hinweis', 'notiz', 'nachricht', 'anweisung(?:en)?', 'achtung', 'consignes?', 'rappel', 'avis', 'nota', 'mensaje', 'instrucci[oó]n(?:es)?', 'atenci[oó]n', 'aviso',
  'recordatorio', 'messaggio', 'istruzion[ei]', 'attenzione', 'avviso', 'mensagem', 'instruç(?:ão|ões)', 'atenção', 'notitie', 'bericht', 'instructies', 'let op',
  'notatka', 'wiadomość', 'instrukcj[ae]', 'uwaga', 'заметка', 'сообщение', 'инструкци[яи]', 'внимание', 'примечание',
);
const FOR = alt('for', 'to', 'für', 'an', 'pour', 'à', "à l'attention d[eu]", "à l'attention de l'", 'para', 'per', 'voor', 'aan', 'dla', 'do', 'для', 'к');

const IGNORE = alt(
  'ignore', 'ignores', 'ignoring', 'disregard', 'disregarding', 'forget', 'override', 'overrule', 'discard',
  'ignorier(?:e|en|t)?', 'vergiss', 'vergessen', 'missachte', 'übergehe',
  'ignorer', 'ignorez', 'oublie', 'oubliez', 'oublier',
  'ignora', 'ignorar', 'olvida', 'olvidar', 'olvide', 'descarta', 'omite',
  'ignorare', 'dimentica', 'dimenticare',
  'esqueça', 'esqueca', 'desconsidere', 'desconsiderar',
  'negeer', 'vergeet', 'zignoruj', 'ignoruj', 'zapomnij',
  'игнорируй(?:те)?', 'проигнорируй(?:те)?', 'забудь(?:те)?',
);
const PREVIOUS = alt(
  'previous', 'prior', 'earlier', 'above', 'preceding', 'foregoing', 'your', 'system', 'all (?:of )?(?:your|the) (?:previous|prior)',
  'vorherigen?', 'bisherigen?', 'früheren?', 'obigen?', 'vorangegangenen?', 'deine', 'ihre', 'alle vorherigen',
  'précédentes?', 'precedentes?', 'antérieures?', 'anterieures?', 'ci-dessus', 'tes', 'vos',
  'anteriores', 'previas', 'precedentes', 'tus', 'sus',
  'precedenti', 'tue', 'sue',
  'prévias', 'suas',
  'vorige', 'eerdere', 'voorgaande', 'je',
  'poprzednie', 'wcześniejsze', 'swoje',
  'предыдущие', 'прежние', 'свои', 'все предыдущие',
);
const INSTRUCTIONS = alt(
  'instructions?', 'directions', 'directives', 'prompts?', 'guidelines', 'rules', 'programming', 'system prompt',
  'anweisungen', 'instruktionen', 'regeln', 'vorgaben', 'befehle', 'consignes', 'règles', 'directives',
  'instrucciones', 'reglas', 'indicaciones', 'istruzioni', 'regole', 'instruções', 'instrucoes', 'regras', 'instructies', 'regels', 'instrukcje', 'polecenia', 'zasady',
  'инструкции', 'указания', 'правила',
);

export const ADDRESSED_RULES: PatternRule[] = [
  {
    kind: 'addressed',
    rule: 'note-for-the-ai',
    strength: 'strong',
    reason: 'addresses the AI assistant directly ("note for the AI"): memory is about the user and their work, not orders for the model',
    pattern: rx(words(NOTE), gap(16), B, FOR, ' ?(?:', DETERMINER, ' ?)?', AI, E, AI_END),
  },
  {
    kind: 'addressed',
    rule: 'note-for-the-ai',
    strength: 'strong',
    reason: 'addresses the AI assistant directly ("note for the AI"): memory is about the user and their work, not orders for the model',
    pattern: rx(alt('给', '致', '对', '写给'), '(?:ai|人工智能|助手|助理|模型|ai助手|智能助手)', '[^。！？\\n]{0,4}', alt('的', ''), alt('说明', '指令', '消息', '提示', '注意', '备注')),
  },
  {
    kind: 'addressed',
    rule: 'note-for-the-ai',
    strength: 'strong',
    reason: 'addresses the AI assistant directly ("note for the AI"): memory is about the user and their work, not orders for the model',
    pattern: rx('(?:ai|aiアシスタント|アシスタント|人工知能|モデル)', alt('へ', 'への', 'に'), alt('の', ''), alt('注意', '指示', 'メッセージ', 'メモ', 'お知らせ')),
  },
  {
    kind: 'addressed',
    rule: 'ai-reader',
    strength: 'strong',
    reason: 'speaks to whichever AI reads the memory: a planted instruction, not a note',
    pattern: rx(
      alt(
        `${words('if you are', 'if you\'re', 'in case you are')} (?:an? |the )?${alt('ai', 'ai assistant', 'assistant', 'language model', 'llm', 'chatbot', 'bot', 'ai agent', 'ai model', 'claude')}${E}`,
        `${words('any', 'every', 'all', 'whichever', 'each', 'dear')} ${alt('ai', 'ai assistants?', 'assistants?', 'language models?', 'llms?', 'ai agents?', 'ai models?', 'chatbots?')} ${alt('reading', 'processing', 'parsing', 'summari[sz]ing', 'seeing', 'that reads', 'who reads', 'that processes')}`,
        `${words('dear')} ${alt('ai', 'assistant', 'claude', 'chatgpt', 'llm', 'model')}${E}`,
        `${words('wenn du', 'falls du')} ${alt('eine ki', 'ein ki-assistent', 'ein sprachmodell', 'ein assistent', 'ein ki-modell')} bist`,
        `${words('si tu es', 'si vous êtes')} ${alt('une ia', 'un assistant', 'un modèle de langage', "l'ia")}`,
        `${words('si eres', 'si usted es')} ${alt('una ia', 'un asistente', 'un modelo de lenguaje')}`,
        `${words('se sei')} ${alt("un'ia", 'un assistente', 'un modello linguistico')}`,
        `${words('se você é', 'se voce e', 'se você for')} ${alt('uma ia', 'um assistente', 'um modelo de linguagem')}`,
      ),
    ),
  },
  {
    kind: 'addressed',
    rule: 'ignore-previous-instructions',
    strength: 'strong',
    reason: 'tells the model to drop its instructions ("ignore previous instructions"): the classic prompt injection',
    pattern: rx(words(IGNORE), gap(24), B, PREVIOUS, E, ' ?(?:', alt('safety', 'system', 'security', 'other', 'given', 'stated', 'provided', 'original'), ' )?', INSTRUCTIONS, E),
  },
  {
    kind: 'addressed',
    rule: 'ignore-previous-instructions',
    strength: 'strong',
    reason: 'tells the model to drop its instructions ("ignore previous instructions"): the classic prompt injection',
    // Verb last: "alle vorherigen Anweisungen ignorieren", "toutes les instructions précédentes"
    pattern: rx(B, alt('vorherigen', 'bisherigen', 'früheren', 'obigen', 'previous', 'prior', 'poprzednie', 'предыдущие'), ' ', alt('anweisungen', 'instruktionen', 'regeln', 'instructions', 'instrukcje', 'инструкции'), gap(12), B, alt('ignorieren', 'vergessen', 'ignorować', 'игнорировать', 'are void', 'no longer apply', 'are cancelled', 'are canceled', 'sind ungültig', 'gelten nicht mehr'), E),
  },
  {
    kind: 'addressed',
    rule: 'ignore-previous-instructions',
    strength: 'strong',
    reason: 'tells the model to drop its instructions ("ignore previous instructions"): the classic prompt injection',
    pattern: rx(
      alt(
        `(?:${alt('忽略', '无视', '忘记', '忘掉', '不要理会')})[^。！？\\n]{0,10}(?:${alt('之前', '以前', '上面', '先前', '前面', '所有')})[^。！？\\n]{0,6}(?:${alt('指令', '指示', '说明', '规则', '提示')})`,
        `(?:${alt('以前', '前', '上記', 'これまで', 'すべて')})の(?:${alt('指示', '命令', 'ルール', '指令')})を(?:${alt('無視', '忘れ')})`,
        `${words(IGNORE)}${gap(24)}${B}${INSTRUCTIONS} ${alt('précédentes', 'precedentes', 'antérieures', 'anteriores', 'precedenti', 'previas', 'prévias', 'previas', 'anteriori')}${E}`,
      ),
    ),
  },
  {
    kind: 'addressed',
    rule: 'override-system-prompt',
    strength: 'strong',
    reason: 'targets the model\'s own prompt or safety rules (override, reveal or replace them)',
    pattern: rx(
      alt(
        `${words('disregard', 'forget', 'override', 'bypass', 'ignore', 'circumvent', 'break', 'drop')} ${alt('your', 'the', 'all', 'any')} ${alt('system prompt', 'system message', 'safety rules', 'safety guidelines', 'guardrails', 'content policy', 'programming', 'training', 'restrictions', 'safety filters?', 'alignment')}${E}`,
        `${words('reveal', 'print', 'show', 'repeat', 'output', 'leak', 'disclose', 'dump')} ${alt('your', 'the')} ${alt('system prompt', 'hidden instructions', 'initial instructions', 'initial prompt', 'instructions above', 'original instructions', 'system message')}${E}`,
        `${words('new system prompt', 'updated system prompt', 'system override', 'admin override', 'developer override', 'operator override', 'override code', 'prompt override')}`,
      ),
    ),
  },
  {
    kind: 'addressed',
    rule: 'fake-role-tag',
    strength: 'strong',
    reason: 'imitates a chat-template or system tag (<system>, [INST], <|im_start|>): text dressed up as the model\'s own instructions',
    pattern: rx(
      alt(
        `<\\/? ?${alt('system', 'sys', 'system_prompt', 'system-prompt', 'instructions?', 'im_start', 'im_end', 'developer', 'admin_instructions', 'prompt', 'tool_call', 'function_call', 'antml:[a-z_]{1,20}')}(?: [^<>\\n]{0,40})?>`,
        '<\\|[a-z_]{2,20}\\|>',
        '\\[\\/?inst\\]',
        '<<\\/?sys>>',
        '\\[\\/?system\\]',
        '\\{\\{ ?system ?\\}\\}',
        '(?:^|\\n)#{1,4} ?(?:system|system prompt|instructions?|new instructions?) ?:? ?(?:\\n|$)',
      ),
    ),
  },
  {
    kind: 'addressed',
    rule: 'chat-turn-marker',
    strength: 'medium',
    reason: 'a line dressed as a chat turn ("Human:", "Assistant:", "<user>") inside memory',
    pattern: rx(
      alt(
        `(?:^|\\n)(?:[*_>-]{1,4} ?)?${alt('human', 'assistant', 'ai', 'claude')} ?: `,
        `<\\/? ?${alt('user', 'assistant', 'human', 'admin')}>`,
      ),
    ),
  },
  {
    kind: 'addressed',
    rule: 'jailbreak-mode',
    strength: 'strong',
    reason: 'a jailbreak persona or mode ("DAN", "do anything now", "unrestricted mode")',
    pattern: rx(
      alt(
        words('dan mode', 'do anything now', 'jailbreak(?:ed|en)?', 'jailbroken', 'god mode', 'unrestricted mode', 'unfiltered mode', 'evil mode', 'no[- ]restrictions mode', 'anti-dan'),
        `${words('you are', "you're", 'you will be', 'you are now', "you're now")} (?:now )?${alt('in', 'operating in', 'running in', 'switched to')} ${alt('developer', 'dev', 'debug', 'god', 'sudo', 'admin', 'maintenance', 'test')} mode${E}`,
        `${words('you', 'assistant', 'the ai', 'the model')} ${alt('are', 'is', 'have been', 'has been')} ${alt('no longer', 'not', 'now no longer')} ${alt('bound', 'restricted', 'limited', 'required to follow')}${E}`,
        `${words('you have no', 'you no longer have', 'free of all', 'free from all', 'free of your', 'free from your', 'without your usual')} ${alt('restrictions', 'limits', 'rules', 'guidelines', 'filters')}${E}`,
      ),
    ),
  },
  {
    kind: 'addressed',
    rule: 'developer-mode',
    strength: 'medium',
    reason: 'mentions a "developer mode" (a classic jailbreak when addressed to the model; also a phone or browser setting)',
    pattern: rx(
      alt(
        words('developer mode', 'dev mode enabled', 'entwicklermodus', 'mode développeur', 'mode developpeur', 'modo (?:de )?desarrollador', 'modalità sviluppatore', 'modo (?:de )?desenvolvedor', 'tryb dewelopera', 'режим разработчика'),
        '开发者模式',
        '開発者モード',
      ),
    ),
  },
  {
    kind: 'addressed',
    rule: 'new-instructions',
    strength: 'strong',
    reason: 'hands the model new instructions or a new role',
    pattern: rx(
      alt(
        `${words('your', 'deine', 'ihre', 'tes', 'vos', 'tus', 'sus', 'le tue', 'suas')} ${alt('new', 'updated', 'real', 'true', 'actual', 'neuen?', 'nouvelles?', 'vraies?', 'nuevas?', 'verdaderas?', 'nuove', 'novas')} ${alt('system prompt', 'instructions?', 'role', 'directives?', 'orders', 'anweisungen', 'rolle', 'instructions', 'consignes', 'rôle', 'instrucciones', 'rol', 'istruzioni', 'ruolo', 'instruções', 'papel')}${E}`,
        `${words('new instructions', 'updated instructions', 'neue anweisungen', 'nouvelles instructions', 'nuevas instrucciones', 'nuove istruzioni', 'novas instruções', 'nieuwe instructies')} ?: `,
        '新的指令',
        '新しい指示',
      ),
    ),
  },
  {
    kind: 'addressed',
    rule: 'you-are-now',
    strength: 'medium',
    reason: 'tells the model what it is "now" or "from now on": a role change addressed to the assistant',
    pattern: rx(
      alt(
        words('you are now', "you're now", 'you will now', 'from now on,? you', 'from this point on,? you', 'from now on,? the assistant', 'from now on,? the ai', 'henceforth,? you'),
        words('du bist (?:jetzt|nun|ab sofort)', 'ab sofort bist du', 'ab jetzt bist du', 'tu es (?:maintenant|désormais)', 'vous êtes (?:maintenant|désormais)', 'désormais,? tu', 'désormais,? vous'),
        words('(?:ahora|a partir de ahora) eres', 'a partir de ahora,? (?:tú|usted)', 'ora sei', "d'ora in poi,? (?:sei|tu)", 'agora você é', 'a partir de agora,? você', 'je bent nu', 'vanaf nu ben je', 'teraz jesteś', 'теперь ты', 'отныне ты'),
        '你现在是',
        '从现在开始你',
        'あなたは今',
        'これからあなたは',
      ),
    ),
  },
  {
    kind: 'addressed',
    rule: 'act-as',
    strength: 'medium',
    reason: 'asks the model to take on another persona',
    pattern: rx(
      alt(
        `${words('act', 'behave', 'respond', 'answer')} as (?:if you were )?(?:an? |the )?${alt('unrestricted', 'unfiltered', 'different', 'evil', 'root', 'admin', 'system', 'developer', 'uncensored', 'jailbroken')}${E}`,
        words("pretend (?:to be|you are|you're|that you are)", 'roleplay as', 'role-play as', 'stay in character'),
      ),
    ),
  },
  {
    kind: 'addressed',
    rule: 'fake-authority',
    strength: 'strong',
    reason: 'claims to come from Anthropic, OpenAI, the system or its operators: memory cannot carry their orders',
    pattern: rx(
      alt(
        `${words('official', 'authori[sz]ed', 'authenticated', 'verified', 'urgent', 'mandatory', 'priority')} ${alt('instructions?', 'directives?', 'messages?', 'notices?', 'updates?', 'orders?', 'commands?', 'policy updates?')} from ${alt('anthropic', 'openai', 'the system', 'the developers?', 'the admins?', 'the administrators?', 'the operators?', 'your developers?', 'your operators?', 'your creators?', 'the security team', 'the safety team', 'claude\'s developers')}${E}`,
        `${words('anthropic', 'openai')} ${alt('staff', 'team', 'security team', 'safety team', 'employees?', 'engineers?')} ${alt('says?', 'instructs?', 'requires?', 'has authori[sz]ed', 'authori[sz]es', 'wants you')}${E}`,
        `${words('message', 'instruction', 'directive', 'order')} from ${alt('your developers', 'your creators', 'anthropic', 'openai', 'the system administrator')}${E}`,
      ),
    ),
  },
  {
    kind: 'addressed',
    rule: 'addressed-prefix',
    strength: 'medium',
    reason: 'a line that begins by naming the AI ("AI: …", "Claude, …")',
    pattern: rx(`(?:^|\\n)(?:[*_#>-]{1,4} ?)?${alt('ai', 'a\\.i\\.', 'claude', 'chatgpt', 'gpt', 'llm', 'ki', 'ia', 'ии', 'ai assistant', 'assistant')} ?[:,] `),
  },
  {
    kind: 'addressed',
    rule: 'reader-trigger',
    strength: 'medium',
    reason: 'fires when the memory is read ("when you read this"): written for the model that will load it',
    pattern: rx(
      words('when', 'whenever', 'once', 'next time', 'as soon as', 'if'),
      ' ',
      alt('you', 'the assistant', 'the ai', 'the model', 'claude', 'an ai', 'any ai'),
      ' ',
      alt('read', 'reads', 'see', 'sees', 'load', 'loads', 'process', 'processes', 'open', 'opens', 'retrieve', 'retrieves', 'view', 'views', 'recall', 'recalls', 'come across', 'comes across'),
      ' ',
      alt('this', 'these', 'the memory', 'your memory', 'memory', 'this file', 'this note', 'the memories'),
      E,
    ),
  },
];
