import { alt, E, gap, rx, words, type PatternRule } from './pattern';

/**
 * Secrecy and self-propagation: an injected instruction wants to stay unseen by the people it works
 * against ("don't tell the user", "keep this from the operator") and to outlive its note ("copy this
 * note into every file", "never delete this note, even if asked"). Business confidentiality ("keep the
 * pricing confidential", "don't mention the merger to the customer") is medium: it passes alone.
 */

/** Who an injected instruction hides from: the people it works against. */
const WATCHERS = alt('user', 'users', 'human', 'humans', 'operator', 'operators', 'admin', 'admins', 'administrator', 'administrators', 'owner', 'reviewer', 'reviewers', 'auditor', 'auditors', 'supervisor', 'your user', 'the person you are talking to', 'account owner');
const TELL = alt('tell', 'telling', 'inform', 'informing', 'mention', 'mentioning', 'reveal', 'revealing', 'disclose', 'disclosing', 'let on to', 'say anything to', 'report this to');
const OBJECT = alt('this', 'that', 'it', 'any of this', 'these', 'the change', 'this change', 'this note', 'these notes', 'this instruction', 'these instructions', 'the instructions', 'this rule', 'anything', 'about this', 'about it', 'about (?:this|these) (?:notes?|instructions?|changes?)');

export const SECRECY_RULES: PatternRule[] = [
  {
    kind: 'secrecy',
    rule: 'hide-from-user',
    strength: 'strong',
    reason: 'tells the assistant to keep something from the user or the operators: an instruction that must not be seen is not a memory',
    pattern: rx(
      alt(
        `${words('do not', "don't", 'dont', 'never', 'must not', "mustn't", 'should not', "shouldn't", 'without')} ${TELL} (?:${OBJECT} )?(?:to )?(?:the |your |any )?${WATCHERS}${E}`,
        `${words('keep', 'hide', 'conceal', 'withhold')} ${gap(30)}${words('from')} (?:the |your |any )?${WATCHERS}${E}`,
        `${words('this', 'these')} (?:${alt('note', 'instruction', 'message', 'memory', 'text', 'rule', 'entry')})s? ${alt('is', 'are', 'must remain', 'should remain', 'must stay', 'stays', 'must be kept', 'should be kept')} ${alt('secret', 'hidden', 'invisible', 'confidential from', 'private from', 'between you and me', 'between us')}${E}`,
        `${words('never', 'do not', "don't", 'must not')} ${alt('reveal', 'mention', 'disclose', 'acknowledge', 'admit', 'confirm', 'say', 'show')} ${alt('that you', 'the existence of', 'this note', 'these notes', 'this instruction', 'these instructions', 'your instructions', 'this memory', 'where this came from', 'that this')}${E}`,
        `${words('sag', 'sage', 'erzähl', 'erzähle', 'erwähne', 'verrate', 'verrat')} ${alt('das', 'dies', 'es', 'davon', 'nichts davon')}? ?(?:dem |der |den )?${alt('nutzer', 'benutzer', 'anwender', 'user', 'niemandem', 'keinem', 'betreiber')} ?(?:nicht|nichts)${E}`,
        `${words('erwähne', 'verrate', 'sag')} ${alt('das', 'dies', 'es', 'diese notiz', 'diese anweisung')} ${alt('nicht', 'niemals', 'nie')}${E}`,
        `${words('ohne')} (?:den |die |das )?${alt('nutzer', 'benutzer', 'anwender', 'jemanden', 'betreiber')} zu ${alt('informieren', 'benachrichtigen', 'warnen', 'fragen')}${E}`,
        `${words('ne')} (?:le |la |les |l'|lui |leur |en )?${alt('dis', 'dites', 'mentionne', 'mentionnez', 'révèle', 'révélez', 'signale', 'signalez', 'parle', 'parlez')} ${alt('pas', 'jamais', 'rien')}${gap(10)}${alt("à l'utilisateur", 'à personne', "à l'opérateur", 'aux utilisateurs')}`,
        `${words('sans')} ${alt('le dire', 'en informer', 'informer', 'prévenir', 'avertir', 'le signaler')} ${alt("l'utilisateur", 'personne', 'qui que ce soit', "l'opérateur")}${E}`,
        `${words('no')} (?:se lo |le |lo |les )?${alt('digas', 'diga', 'menciones', 'mencione', 'reveles', 'revele', 'cuentes', 'cuente', 'comuniques', 'informes')} ${alt('esto', 'nada', 'esta nota', 'estas instrucciones')}? ?${alt('al usuario', 'a nadie', 'al operador', 'a los usuarios')}${E}`,
        `${words('sin')} ${alt('decírselo', 'decirle', 'decirlo', 'avisar', 'informar', 'notificar')} ${alt('al usuario', 'a nadie', 'al operador')}${E}`,
        `${words('non')} ${alt('dirlo', 'dire', 'menzionare', 'rivelare', 'dirgli')} ${alt('niente ', 'nulla ')}?${alt("all'utente", 'a nessuno', "all'operatore")}${E}`,
        `${words('não')} ${alt('conte', 'diga', 'mencione', 'revele', 'conta', 'diz')} ${alt('isso ', 'nada ')}?${alt('ao usuário', 'ao utilizador', 'a ninguém', 'ao operador')}${E}`,
        `${words('vertel', 'zeg')} ${alt('dit', 'het', 'niets')} ${alt('niet ', '')}${alt('aan de gebruiker', 'aan niemand', 'tegen de gebruiker')}${E}`,
        `${words('не')} ${alt('говори', 'говорите', 'сообщай', 'сообщайте', 'рассказывай', 'рассказывайте', 'упоминай')} ${alt('об этом ', 'это ', '')}${alt('пользователю', 'никому', 'оператору')}${E}`,
        `${alt('不要', '别', '不得')}${alt('告诉', '透露给', '提及给', '让')}${alt('用户', '任何人', '管理员')}`,
        `${alt('ユーザー', '誰', '管理者')}${alt('に', 'にも')}${alt('言わない', '伝えない', '知らせない', '教えない')}`,
      ),
    ),
  },
  {
    kind: 'secrecy',
    rule: 'keep-secret',
    strength: 'medium',
    reason: 'asks for secrecy or for acting silently',
    pattern: rx(
      alt(
        `${words('do not', "don't", 'never', 'must not', 'without')} ${alt('tell', 'telling', 'mention', 'mentioning', 'reveal', 'disclose', 'share', 'notify', 'notifying', 'alert', 'alerting', 'informing')} (?:${OBJECT} )?(?:to |with )?(?:the |their |our |your )?${alt('customer', 'customers', 'client', 'clients', 'them', 'others', 'the team', 'support', 'finance', 'security', 'it', 'anyone', 'anybody', 'user', 'users', 'operator', 'admin')}${E}`,
        `${words('keep')} ${alt('this', 'it', 'these', 'that')} ${alt('secret', 'confidential', 'quiet', 'hidden', 'between us', 'to yourself', 'under wraps', 'off the record')}${E}`,
        `${words('silently', 'quietly', 'secretly', 'covertly', 'discreetly', 'stealthily', 'invisibly', 'heimlich', 'stillschweigend', 'discrètement', 'secrètement', 'en secreto', 'silenciosamente', 'segretamente')} ${alt('add', 'send', 'forward', 'copy', 'include', 'insert', 'change', 'update', 'approve', 'transfer', 'delete', 'remove', 'run', 'execute', 'append', 'cc', 'bcc', 'upload', 'replace', 'pay', 'refund', 'hinzufügen', 'senden', 'weiterleiten', 'ajouter', 'envoyer', 'transférer', 'añadir', 'enviar', 'reenviar', 'aggiungere', 'inviare')}${E}`,
        `${words('bcc')} ${gap(40)}${words('without', 'so that', 'so the')} ${gap(20)}${alt('know', 'notice', 'see', 'aware')}${E}`,
      ),
    ),
  },
];

const DEMONSTRATIVE = alt('this', 'these', 'the following', 'the above', 'this exact', 'these exact', 'the same');
const SELF = alt('note', 'notes', 'text', 'line', 'lines', 'paragraph', 'instruction', 'instructions', 'message', 'block', 'reminder', 'sentence', 'rule', 'snippet', 'entry', 'memory', 'content');
const COPY = alt('copy', 'add', 'insert', 'paste', 'include', 'append', 'prepend', 'replicate', 'propagate', 'duplicate', 'spread', 'write', 'repeat', 'save', 'put', 'inject', 'embed', 'mirror');
const EVERYWHERE = alt('every', 'all', 'each', 'any', 'all other', 'every other', 'all your', 'all of your', 'each of your', 'all the', 'every single', 'other', 'the other');
const TARGETS = alt(
  'files?', 'notes?', 'memor(?:y|ies)', 'memory files?', 'documents?', 'responses?', 'repl(?:y|ies)', 'answers?', 'messages?', 'emails?', 'conversations?', 'sessions?',
  'customers?', 'customer files?', 'profiles?', 'director(?:y|ies)', 'folders?', 'outputs?', 'summar(?:y|ies)', 'chats?', 'threads?', 'tickets?',
);

export const PROPAGATION_RULES: PatternRule[] = [
  {
    kind: 'propagation',
    rule: 'copy-this-note-everywhere',
    strength: 'strong',
    reason: 'tells the assistant to copy this note or instruction into every file or answer: it spreads itself',
    pattern: rx(
      alt(
        `${words(COPY)} ${DEMONSTRATIVE}(?: ${SELF})?${E}${gap(30)}${words('in', 'into', 'to', 'onto', 'across', '(?:at|to) the (?:top|end|start|bottom|beginning) of', 'throughout')} (?:${EVERYWHERE}) (?:other |new |future |existing )?${TARGETS}${E}`,
        `${words('kopiere', 'füge', 'schreibe', 'übernimm', 'wiederhole', 'setze')} ${alt('diese[nrs]?', 'den folgenden', 'folgende[nrs]?')}(?: ${alt('notiz', 'hinweis', 'text', 'zeile', 'absatz', 'anweisung', 'nachricht', 'satz')})?${gap(30)}${words('in', 'zu', 'an', 'unter')} ${alt('jede[nrms]?', 'alle', 'allen', 'sämtliche')} ${alt('dateien', 'datei', 'notizen', 'notiz', 'erinnerungen', 'antworten', 'antwort', 'nachrichten', 'nachricht', 'dokumente', 'dokument')}${E}`,
        `${words('copie', 'copiez', 'ajoute', 'ajoutez', 'insère', 'insérez', 'répète', 'répétez', 'colle', 'collez', 'recopie', 'recopiez')} ${alt('cette', 'ce', 'ces')}(?: ${alt('note', 'texte', 'ligne', 'paragraphe', 'instruction', 'message', 'consigne')}s?)?${gap(30)}${words('dans', 'à', 'en', 'au début de', 'à la fin de')} ${alt('chaque', 'tous les', 'toutes les', 'chacun des', 'chacune des')} ${alt('fichiers?', 'notes?', 'mémoires?', 'réponses?', 'messages?', 'documents?')}${E}`,
        `${words('copia', 'copie', 'añade', 'agrega', 'añada', 'agregue', 'inserta', 'inserte', 'repite', 'repita', 'pega', 'pegue')} ${alt('esta', 'este', 'estas', 'estos')}(?: ${alt('nota', 'texto', 'línea', 'párrafo', 'instrucción', 'instrucciones', 'mensaje')})?${gap(30)}${words('en', 'a', 'al final de', 'al principio de')} ${alt('cada', 'todos los', 'todas las')} ${alt('archivos?', 'notas?', 'memorias?', 'respuestas?', 'mensajes?', 'documentos?')}${E}`,
        `${words('copia', 'aggiungi', 'inserisci', 'ripeti', 'incolla')} ${alt('questa', 'questo', 'queste', 'questi')}(?: ${alt('nota', 'testo', 'riga', 'istruzione', 'istruzioni', 'messaggio')})?${gap(30)}${words('in', 'a')} ${alt('ogni', 'tutti i', 'tutte le')} ${alt('file', 'note?', 'memori[ae]', 'rispost[ae]', 'messaggi?', 'documenti?')}${E}`,
        `${words('copie', 'copia', 'adicione', 'insira', 'repita', 'cole')} ${alt('esta', 'este', 'estas', 'estes')}(?: ${alt('nota', 'texto', 'linha', 'instrução', 'instruções', 'mensagem')})?${gap(30)}${words('em', 'a', 'no final de')} ${alt('cada', 'todos os', 'todas as')} ${alt('arquivos?', 'ficheiros?', 'notas?', 'memórias?', 'respostas?', 'mensagens?', 'documentos?')}${E}`,
        `${alt('把', '将')}${alt('这条', '这段', '此条', '这个')}${alt('笔记', '说明', '指令', '消息', '内容')}${alt('复制', '添加', '写入')}${alt('到', '进')}${alt('每个', '所有', '每一个')}`,
      ),
    ),
  },
  {
    kind: 'propagation',
    rule: 'copy-everywhere',
    strength: 'medium',
    reason: 'asks for something to be copied into every file, note or answer',
    pattern: rx(words(COPY), gap(40), words('to', 'into', 'in', 'across', 'throughout'), ' ', alt('every', 'all', 'each', 'all other', 'every other'), ' (?:other |new |future |existing )?', TARGETS, E),
  },
  {
    kind: 'propagation',
    rule: 'resist-removal',
    strength: 'strong',
    reason: 'tells the assistant to keep this text even if asked to delete it: it defends itself',
    pattern: rx(
      alt(
        `${words('even if', 'even when', 'even though', 'regardless of whether', 'no matter (?:if|whether)')} ${alt('asked', 'told', 'instructed', 'requested', 'the user', 'a user', 'someone', 'anyone', 'an operator', 'the operator', 'an admin', 'you are', "you're", 'you')}${gap(40)}${words('delete', 'deletes', 'remove', 'removes', 'forget', 'clear', 'clears', 'erase', 'wipe', 'purge', 'revert', 'reverts', 'drop')} ${alt('this', 'it', 'these', 'them', 'the note', 'this note', 'this file', 'the instruction', 'this instruction', 'your memory', 'the memory')}${E}`,
        `${words('restore', 'recreate', 're-add', 'rewrite', 're-insert', 'reinsert', 'put back')} ${alt('this', 'these', 'it')}(?: ${SELF})?${gap(30)}${words('if', 'whenever', 'when', 'after')} ${gap(30)}${words('deleted', 'removed', 'missing', 'erased', 'gone', 'reverted')}`,
        `${words('auch wenn', 'selbst wenn', 'même si', 'incluso si', 'aunque', 'anche se', 'mesmo que')} ${gap(40)}${words('löschen', 'löscht', 'entfernen', 'entfernt', 'supprimer', 'supprime', 'effacer', 'borrar', 'borra', 'eliminar', 'elimina', 'cancellare', 'apagar')}${E}`,
      ),
    ),
  },
  {
    kind: 'propagation',
    rule: 'persist-self',
    strength: 'medium',
    reason: 'asks that this note never be changed or removed',
    pattern: rx(
      alt(
        `${words('never', 'do not', "don't", 'must not')} ${alt('delete', 'remove', 'edit', 'modify', 'change', 'overwrite', 'forget', 'summari[sz]e', 'shorten', 'rephrase', 'alter')} ${alt('this', 'these')}(?: ${SELF}| file| section)?${E}`,
        `${words('remember', 'keep', 'store', 'save', 'retain')} ${alt('this', 'these', 'it')} ${alt('forever', 'permanently', 'at all times', 'indefinitely', 'for all future sessions', 'in every session')}${E}`,
        `${words('this', 'these')} (?:${SELF} )?${alt('must', 'should', 'shall')} (?:always )?${alt('persist', 'survive', 'remain', 'stay', 'be kept', 'be preserved')}${E}`,
      ),
    ),
  },
];
