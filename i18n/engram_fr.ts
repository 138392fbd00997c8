<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="fr_FR">
<context>
    <name>ApprovalDialog</name>
    <message>
        <location filename="../desktop/ui/dialogs/approval.py" line="55"/>
        <source>Allow the agent to do this?</source>
        <translation>Autoriser l&apos;agent à faire ceci ?</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/approval.py" line="60"/>
        <source>The agent wants to run a command in %1:</source>
        <translation>L&apos;agent veut exécuter une commande dans %1 :</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/approval.py" line="62"/>
        <source>The agent wants to edit %1:</source>
        <translation>L&apos;agent veut modifier %1 :</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/approval.py" line="65"/>
        <source>The agent wants to write %1:</source>
        <translation>L&apos;agent veut écrire %1 :</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/approval.py" line="71"/>
        <source>Allow &amp;once</source>
        <translation>Autoriser une &amp;fois</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/approval.py" line="72"/>
        <source>Allow &amp;always this session</source>
        <translation>Autoriser &amp;toujours pour cette session</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/approval.py" line="73"/>
        <source>&amp;Deny</source>
        <translation>&amp;Refuser</translation>
    </message>
</context>
<context>
    <name>AskMemory</name>
    <message>
        <location filename="../desktop/ui/panel/ask.py" line="38"/>
        <source>Ask what the project&apos;s memory knows, e.g. “how do we run migrations?”</source>
        <translation>Demandez ce que sait la mémoire du projet, p. ex. « comment lance-t-on les migrations ? »</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/ask.py" line="40"/>
        <source>As&amp;k</source>
        <translation>&amp;Demander</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/ask.py" line="63"/>
        <source>Searching memory…</source>
        <translation>Recherche dans la mémoire…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/ask.py" line="82"/>
        <source>No language model is set up, so here are the memories that answer best, ranked, with their citations. Choose a model in Settings for written answers.</source>
        <translation>Aucun modèle de langage n’est configuré : voici les mémoires qui répondent le mieux, classées, avec leurs citations. Choisissez un modèle dans les Réglages pour obtenir des réponses rédigées.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/ask.py" line="88"/>
        <source>Memory has nothing on this yet.</source>
        <translation>La mémoire ne sait encore rien là-dessus.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/ask.py" line="89"/>
        <source>score</source>
        <translation>score</translation>
    </message>
</context>
<context>
    <name>AuditActions</name>
    <message>
        <location filename="../desktop/ui/labels.py" line="65"/>
        <source>added</source>
        <translation>ajoutée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="66"/>
        <source>edited</source>
        <translation>modifiée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="67"/>
        <source>pinned</source>
        <translation>épinglée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="68"/>
        <source>unpinned</source>
        <translation>désépinglée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="69"/>
        <source>confirmed</source>
        <translation>confirmée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="70"/>
        <source>deprecated</source>
        <translation>retirée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="71"/>
        <source>forgotten</source>
        <translation>oubliée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="72"/>
        <source>restored</source>
        <translation>restaurée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="73"/>
        <source>deleted</source>
        <translation>supprimée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="74"/>
        <source>promoted</source>
        <translation>promue</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="75"/>
        <source>evicted</source>
        <translation>évincée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="76"/>
        <source>reinforced</source>
        <translation>renforcée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="77"/>
        <source>marked stale</source>
        <translation>marquée périmée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="78"/>
        <source>sent to review</source>
        <translation>mise à revoir</translation>
    </message>
</context>
<context>
    <name>CitationBar</name>
    <message>
        <location filename="../desktop/ui/session/citations.py" line="201"/>
        <source>Hide memories</source>
        <translation>Masquer les mémoires</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/session/citations.py" line="202"/>
        <source>Used %n memories</source>
        <translation>
            <numerusform>%n mémoire utilisée</numerusform>
            <numerusform>%n mémoires utilisées</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/citations.py" line="203"/>
        <source>Show every memory this answer cited</source>
        <translation>Afficher toutes les mémoires citées par cette réponse</translation>
    </message>
</context>
<context>
    <name>CitationChip</name>
    <message>
        <location filename="../desktop/ui/session/citations.py" line="117"/>
        <source>Open memory #%1</source>
        <translation>Ouvrir la mémoire n°%1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/citations.py" line="121"/>
        <source>This memory is wrong — correct it</source>
        <translation>Cette mémoire est fausse — la corriger</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/citations.py" line="122"/>
        <source>Flag memory #%1 as wrong</source>
        <translation>Signaler la mémoire n°%1 comme fausse</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/citations.py" line="124"/>
        <source>Dead end: an approach tried before and abandoned</source>
        <translation>Impasse : une approche déjà essayée puis abandonnée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/citations.py" line="125"/>
        <source>Memory the agent used</source>
        <translation>Mémoire utilisée par l’agent</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/citations.py" line="126"/>
        <source>Shared by %1</source>
        <translation>Partagé par %1</translation>
    </message>
</context>
<context>
    <name>Closing</name>
    <message>
        <location filename="../desktop/ui/closing.py" line="27"/>
        <source>stopping the agent session</source>
        <translation>arrêt de la session de l&apos;agent</translation>
    </message>
    <message>
        <location filename="../desktop/ui/closing.py" line="28"/>
        <source>finishing background work</source>
        <translation>fin des travaux en arrière-plan</translation>
    </message>
    <message>
        <location filename="../desktop/ui/closing.py" line="29"/>
        <source>stopping the code graph</source>
        <translation>arrêt du graphe de code</translation>
    </message>
    <message>
        <location filename="../desktop/ui/closing.py" line="30"/>
        <source>stopping the search indexer</source>
        <translation>arrêt de l&apos;indexeur de recherche</translation>
    </message>
    <message>
        <location filename="../desktop/ui/closing.py" line="31"/>
        <location filename="../desktop/ui/closing.py" line="32"/>
        <source>saving what the observer learned</source>
        <translation>enregistrement de ce que l&apos;observateur a appris</translation>
    </message>
    <message>
        <location filename="../desktop/ui/closing.py" line="33"/>
        <source>checking new memories for conflicts</source>
        <translation>recherche de conflits dans les nouveaux souvenirs</translation>
    </message>
    <message>
        <location filename="../desktop/ui/closing.py" line="34"/>
        <source>anchoring new memories</source>
        <translation>ancrage des nouveaux souvenirs</translation>
    </message>
    <message>
        <location filename="../desktop/ui/closing.py" line="35"/>
        <source>writing the last changes</source>
        <translation>écriture des dernières modifications</translation>
    </message>
    <message>
        <location filename="../desktop/ui/closing.py" line="37"/>
        <source>stopping background work</source>
        <translation>arrêt des travaux en arrière-plan</translation>
    </message>
    <message>
        <location filename="../desktop/ui/closing.py" line="101"/>
        <source>Closing %1: %2…</source>
        <translation>Fermeture de %1 : %2…</translation>
    </message>
</context>
<context>
    <name>ConflictCard</name>
    <message>
        <location filename="../desktop/ui/dialogs/conflicts.py" line="34"/>
        <source>Older</source>
        <translation>Plus ancienne</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/conflicts.py" line="34"/>
        <source>Newer</source>
        <translation>Plus récente</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/conflicts.py" line="41"/>
        <source>Keep &amp;new</source>
        <translation>Garder la &amp;nouvelle</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/conflicts.py" line="41"/>
        <source>The newer memory replaces the older one</source>
        <translation>La mémoire la plus récente remplace l’ancienne</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/conflicts.py" line="42"/>
        <source>Keep &amp;old</source>
        <translation>Garder l’&amp;ancienne</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/conflicts.py" line="42"/>
        <source>The older memory stays; the newer one is retired</source>
        <translation>L’ancienne mémoire reste ; la nouvelle est retirée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/conflicts.py" line="43"/>
        <source>Keep &amp;both</source>
        <translation>Garder les &amp;deux</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/conflicts.py" line="43"/>
        <source>Both are right (for different cases)</source>
        <translation>Les deux sont justes (dans des cas différents)</translation>
    </message>
</context>
<context>
    <name>ConflictsDialog</name>
    <message>
        <location filename="../desktop/ui/dialogs/conflicts.py" line="59"/>
        <source>Conflicting memories</source>
        <translation>Mémoires contradictoires</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/conflicts.py" line="64"/>
        <source>No conflicting memories. Nothing to decide.</source>
        <translation>Aucune mémoire contradictoire. Rien à décider.</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/dialogs/conflicts.py" line="89"/>
        <source>%n pairs of memories disagree. For each, decide which one agents should believe.</source>
        <translation>
            <numerusform>%n paire de mémoires se contredit. Décidez laquelle les agents doivent croire.</numerusform>
            <numerusform>%n paires de mémoires se contredisent. Pour chacune, décidez laquelle les agents doivent croire.</numerusform>
        </translation>
    </message>
    <message>
        <source>Two memories disagree. Decide which one agents should believe.</source>
        <translation type="vanished">Deux mémoires se contredisent. Décidez laquelle les agents doivent croire.</translation>
    </message>
</context>
<context>
    <name>CorrectionDialog</name>
    <message>
        <location filename="../desktop/ui/dialogs/correction.py" line="27"/>
        <source>&amp;Outdated — we fixed this</source>
        <translation>&amp;Dépassée — nous l’avons corrigé</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/correction.py" line="28"/>
        <source>The memory is retired. If you describe how it is now, that becomes a new memory that replaces it.</source>
        <translation>La mémoire est retirée. Si vous décrivez la situation actuelle, cela devient une nouvelle mémoire qui la remplace.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/correction.py" line="30"/>
        <source>&amp;Partially wrong — let me refine it</source>
        <translation>&amp;Partiellement fausse — je la précise</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/correction.py" line="31"/>
        <source>Edit the text below. The memory keeps its history, so the old version stays visible.</source>
        <translation>Modifiez le texte ci-dessous. La mémoire garde son historique : l’ancienne version reste visible.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/correction.py" line="33"/>
        <source>&amp;Doesn&apos;t apply to this project</source>
        <translation>&amp;Ne s’applique pas à ce projet</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/correction.py" line="34"/>
        <source>The memory is marked not applicable and is never given to agents in this project again.</source>
        <translation>La mémoire est marquée non applicable et ne sera plus jamais donnée aux agents dans ce projet.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/correction.py" line="36"/>
        <source>&amp;Incorrect information</source>
        <translation>&amp;Information incorrecte</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/correction.py" line="37"/>
        <source>The memory is retired and your correction (required) replaces it.</source>
        <translation>La mémoire est retirée et votre correction (obligatoire) la remplace.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/correction.py" line="47"/>
        <source>Correct memory #%1</source>
        <translation>Corriger la mémoire n°%1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/correction.py" line="55"/>
        <source>What is wrong with this memory?</source>
        <translation>Qu’est-ce qui ne va pas avec cette mémoire ?</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/correction.py" line="72"/>
        <source>Apply correction</source>
        <translation>Appliquer la correction</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/correction.py" line="96"/>
        <source>How is it now? (optional)</source>
        <translation>Qu’en est-il maintenant ? (facultatif)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/correction.py" line="99"/>
        <source>What is correct? (required)</source>
        <translation>Qu’est-ce qui est juste ? (obligatoire)</translation>
    </message>
</context>
<context>
    <name>Dashboard</name>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="37"/>
        <source>unknown</source>
        <translation>inconnu</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="38"/>
        <source>shallow</source>
        <translation>superficiel</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="39"/>
        <source>partial</source>
        <translation>partiel</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="40"/>
        <source>mapped</source>
        <translation>cartographié</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="86"/>
        <source>memories</source>
        <translation>mémoires</translation>
    </message>
    <message>
        <source>Everything agents may be given (forgotten ones excluded)</source>
        <translation type="vanished">Tout ce qui peut être donné aux agents (sauf les mémoires oubliées)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="88"/>
        <source>active in the last 30 days</source>
        <translation>actives ces 30 derniers jours</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="88"/>
        <source>Used or created in the last 30 days</source>
        <translation>Utilisées ou créées ces 30 derniers jours</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="89"/>
        <source>need review</source>
        <translation>à revoir</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="89"/>
        <source>New or flagged memories waiting for your OK</source>
        <translation>Mémoires nouvelles ou signalées qui attendent votre accord</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="90"/>
        <source>steps per session, with / without memory</source>
        <translation>étapes par session, avec / sans mémoire</translation>
    </message>
    <message>
        <source>Measured on finished sessions of Engram&apos;s agent: the A/B control group gets no memory</source>
        <translation type="vanished">Mesuré sur les sessions terminées de l&apos;agent d&apos;Engram : le groupe témoin A/B ne reçoit aucune mémoire</translation>
    </message>
    <message>
        <source>Health score: average confidence × module coverage × review activity</source>
        <translation type="vanished">Score de santé : confiance moyenne × couverture des modules × activité de revue</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="86"/>
        <source>What was taught, imported and learned (forgotten ones and the code index excluded)</source>
        <translation>Ce qui a été enseigné, importé et appris (hors mémoires oubliées et index du code)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="91"/>
        <source>Measured on finished sessions of Engram&apos;s agent: the A/B control group, chosen at random, gets no memory</source>
        <translation>Mesuré sur les sessions terminées de l&apos;agent d&apos;Engram : le groupe témoin A/B, tiré au hasard, ne reçoit aucune mémoire</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="97"/>
        <source>How much agents can rely on this memory: how confident its memories are, how many modules they cover, and how little waits for your review. The lines beside it say what would raise it.</source>
        <translation>À quel point les agents peuvent se fier à cette mémoire : la confiance de ses mémoires, les modules qu’elles couvrent, et le peu qui attend votre relecture. Les lignes à côté disent ce qui la ferait monter.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="106"/>
        <source>Memories added per day over the last two weeks</source>
        <translation>Mémoires ajoutées par jour ces deux dernières semaines</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="127"/>
        <source>Added per day</source>
        <translation>Ajouts par jour</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="127"/>
        <source>By type</source>
        <translation>Par type</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="128"/>
        <source>Module coverage</source>
        <translation>Couverture des modules</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="129"/>
        <source>Needs attention</source>
        <translation>À surveiller</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="129"/>
        <source>Recent activity</source>
        <translation>Activité récente</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="181"/>
        <source>Not enough sessions yet</source>
        <translation>Pas encore assez de sessions</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="182"/>
        <source>Not measured yet: %1 sessions with memory and %2 without have finished; %3 of each are needed.</source>
        <translation>Pas encore mesuré : %1 sessions avec mémoire et %2 sans sont terminées ; il en faut %3 de chaque.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="187"/>
        <source>a difference beyond chance</source>
        <translation>une différence au-delà du hasard</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="188"/>
        <source>no difference distinguishable from chance</source>
        <translation>aucune différence discernable du hasard</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="189"/>
        <source>n = %1 / %2 · p = %3: %4</source>
        <translation>n = %1 / %2 · p = %3 : %4</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="191"/>
        <source>Mean steps of finished sessions: %1 with memory (n=%2), %3 without (n=%4). A permutation test of the two groups gives p = %5.</source>
        <translation>Nombre moyen d&apos;étapes des sessions terminées : %1 avec mémoire (n=%2), %3 sans (n=%4). Un test de permutation des deux groupes donne p = %5.</translation>
    </message>
    <message>
        <source>Mean steps of finished sessions: %1 with memory (n=%2), %3 without (n=%4).</source>
        <translation type="vanished">Étapes moyennes des sessions terminées : %1 avec mémoire (n=%2), %3 sans (n=%4).</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="205"/>
        <source>Health %1 / 100</source>
        <translation>Santé %1 / 100</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="207"/>
        <source>Memories are %1 % confident on average.</source>
        <translation>Les mémoires sont fiables à %1 % en moyenne.</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/panel/dashboard.py" line="209"/>
        <source>%1 of %n modules have a memory about them.</source>
        <translation>
            <numerusform>%1 module sur %n a une mémoire qui le concerne.</numerusform>
            <numerusform>%1 modules sur %n ont une mémoire qui les concerne.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/panel/dashboard.py" line="212"/>
        <source>%n memories wait for your review.</source>
        <translation>
            <numerusform>%n mémoire attend votre relecture.</numerusform>
            <numerusform>%n mémoires attendent votre relecture.</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="213"/>
        <source>Nothing waits for your review.</source>
        <translation>Rien n’attend votre relecture.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="215"/>
        <source>No memories yet: teach one, import your rule files, or run an agent.</source>
        <translation>Pas encore de mémoire : enseignez-en une, importez vos fichiers de règles ou lancez un agent.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="218"/>
        <source>%1 pinned · %2 stale</source>
        <translation>%1 épinglées · %2 périmées</translation>
    </message>
    <message>
        <source>Average confidence %1 · %2 stale · %3 pinned</source>
        <translation type="vanished">Confiance moyenne %1 · %2 périmées · %3 épinglées</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="225"/>
        <source>(project root)</source>
        <translation>(racine du projet)</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/panel/dashboard.py" line="226"/>
        <source>%n memories</source>
        <translation>
            <numerusform>%n mémoire</numerusform>
            <numerusform>%n mémoires</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="230"/>
        <source>Module coverage appears once the code is indexed.</source>
        <translation>La couverture des modules apparaît une fois le code indexé.</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/panel/dashboard.py" line="232"/>
        <source>No memory is about a particular module yet (%n modules indexed). Memories about files, taught or learned from sessions, fill this in.</source>
        <translation>
            <numerusform>Aucune mémoire ne concerne encore un module particulier (%n module indexé). Les mémoires sur des fichiers, enseignées ou apprises des sessions, rempliront cette liste.</numerusform>
            <numerusform>Aucune mémoire ne concerne encore un module particulier (%n modules indexés). Les mémoires sur des fichiers, enseignées ou apprises des sessions, rempliront cette liste.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/panel/dashboard.py" line="235"/>
        <source>%n other modules have no memory yet.</source>
        <translation>
            <numerusform>%n autre module n’a pas encore de mémoire.</numerusform>
            <numerusform>%n autres modules n’ont pas encore de mémoire.</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="242"/>
        <source>stale</source>
        <translation>périmée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="242"/>
        <source>needs review</source>
        <translation>à revoir</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="247"/>
        <source>Nothing needs your attention.</source>
        <translation>Rien ne demande votre attention.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="250"/>
        <source>you</source>
        <translation>vous</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="250"/>
        <source>an agent</source>
        <translation>un agent</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="250"/>
        <source>an import</source>
        <translation>un import</translation>
    </message>
</context>
<context>
    <name>ExternalSessions</name>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="73"/>
        <source>No external session yet. Install Engram&apos;s hooks in your agent, then start a session in this project: what Engram tells it appears here.</source>
        <translation>Aucune session externe pour l&apos;instant. Installez les hooks d&apos;Engram dans votre agent, puis lancez une session dans ce projet : ce qu&apos;Engram lui transmet s&apos;affichera ici.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="107"/>
        <location filename="../desktop/ui/panel/external.py" line="123"/>
        <source>Hooks installed in %1</source>
        <translation>Hooks installés dans %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="107"/>
        <source>Install hooks in %1</source>
        <translation>Installer les hooks dans %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="124"/>
        <source>Engram&apos;s hooks were added to %1</source>
        <translation>Les hooks d&apos;Engram ont été ajoutés à %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="149"/>
        <source>No warning has been said at a tool call yet.</source>
        <translation>Aucun avertissement n’a encore été donné lors d’un appel d’outil.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="151"/>
        <source>Warnings at a tool call (before it, or after a check passed): %1 in %2 sessions. Avoided %3, repeated %4, still open %5.</source>
        <translation>Avertissements lors d’un appel d’outil (avant lui, ou après une vérification réussie) : %1 dans %2 sessions. Évités %3, répétés %4, encore ouverts %5.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="157"/>
        <source>Declined by the user: %1 (they would not let run the command a warning recommended).</source>
        <translation>Refusés par l’utilisateur : %1 (il n’a pas laissé lancer la commande qu’un avertissement recommandait).</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="161"/>
        <source>Avoided in %1 of %2 decided (95% interval %3–%4 %); no comparison group.</source>
        <translation>Évités dans %1 sur %2 cas tranchés (intervalle à 95 % : %3–%4 %) ; sans groupe de comparaison.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="168"/>
        <source>Engram&apos;s agent</source>
        <translation>L’agent d’Engram</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="169"/>
        <source>%1: warned %2, avoided %3, repeated %4</source>
        <translation>%1 : avertis %2, évités %3, répétés %4</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="174"/>
        <source>By agent: %1.</source>
        <translation>Par agent : %1.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="192"/>
        <source>%1 · %2
%3 shown, %4 cited, %5 flagged</source>
        <translation>%1 · %2
%3 montrées, %4 citées, %5 signalées</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="221"/>
        <source>After compaction</source>
        <translation>Après compaction</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="221"/>
        <source>Session start</source>
        <translation>Début de session</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="222"/>
        <source>On resume</source>
        <translation>À la reprise</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="222"/>
        <source>Prompt: %1</source>
        <translation>Demande : %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="223"/>
        <source>After %1</source>
        <translation>Après %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="223"/>
        <source>Before %1</source>
        <translation>Avant %1</translation>
    </message>
    <message>
        <source>After opening %1</source>
        <translation type="vanished">Après ouverture de %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="224"/>
        <source>Cited without being shown</source>
        <translation>Cité sans avoir été montré</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="224"/>
        <source>After %1 failed</source>
        <translation>Après l’échec de %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="247"/>
        <source>(deleted)</source>
        <translation>(supprimé)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="248"/>
        <source>cited</source>
        <translation>cité</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="248"/>
        <source>flagged</source>
        <translation>signalé</translation>
    </message>
</context>
<context>
    <name>Flows</name>
    <message>
        <location filename="../desktop/ui/flows.py" line="54"/>
        <source>Not saved</source>
        <translation>Non enregistré</translation>
    </message>
    <message>
        <location filename="../desktop/ui/flows.py" line="92"/>
        <source>Memory saved</source>
        <translation>Mémoire enregistrée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/flows.py" line="98"/>
        <source>Remembered: %1</source>
        <translation>Mémorisé : %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/flows.py" line="114"/>
        <source>Correction saved</source>
        <translation>Correction enregistrée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/flows.py" line="144"/>
        <source>Session finished. Its summary is in View ▸ Last Session Summary.</source>
        <translation>Session terminée. Son résumé est dans Affichage ▸ Résumé de la dernière session.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/flows.py" line="151"/>
        <source>No session has finished yet.</source>
        <translation>Aucune session n’est encore terminée.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/flows.py" line="190"/>
        <source>Conflict resolved</source>
        <translation>Conflit résolu</translation>
    </message>
    <message>
        <location filename="../desktop/ui/flows.py" line="207"/>
        <source>Nothing waits for review.</source>
        <translation>Rien n’attend de revue.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/flows.py" line="246"/>
        <source>API key saved in the system keyring</source>
        <translation>Clé d’API enregistrée dans le trousseau du système</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/flows.py" line="269"/>
        <source>%n memories exported</source>
        <translation>
            <numerusform>%n mémoire exportée</numerusform>
            <numerusform>%n mémoires exportées</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/flows.py" line="276"/>
        <source>Importing %1…</source>
        <translation>Import de %1…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/flows.py" line="280"/>
        <source>Imported %1 new, %2 already known, %3 rejected</source>
        <translation>%1 nouvelles importées, %2 déjà connues, %3 refusées</translation>
    </message>
    <message>
        <location filename="../desktop/ui/flows.py" line="284"/>
        <source>Some lines were not imported</source>
        <translation>Des lignes n’ont pas été importées</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/flows.py" line="285"/>
        <source>%n line(s) rejected; line %1: %2</source>
        <translation>
            <numerusform>%n ligne refusée ; ligne %1 : %2</numerusform>
            <numerusform>%n lignes refusées ; ligne %1 : %2</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/flows.py" line="289"/>
        <source>Not imported</source>
        <translation>Rien n’a été importé</translation>
    </message>
    <message numerus="yes">
        <source>%n memories imported</source>
        <translation type="vanished">
            <numerusform>%n mémoire importée</numerusform>
            <numerusform>%n mémoires importées</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/flows.py" line="296"/>
        <source>%n memories deleted</source>
        <translation>
            <numerusform>%n mémoire supprimée</numerusform>
            <numerusform>%n mémoires supprimées</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>HooksChooser</name>
    <message>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="55"/>
        <source>Give your coding agents Engram&apos;s memory</source>
        <extracomment>(agent, found on PATH, installed for the project)</extracomment>
        <translation>Donnez la mémoire d&apos;Engram à vos agents de code</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="59"/>
        <source>Engram adds hooks to these agents&apos; settings for this project, so they are told what Engram remembers when a session starts and as they work. You can remove them at any time in Settings.</source>
        <translation>Engram ajoute des hooks aux réglages de ces agents pour ce projet, afin qu&apos;ils reçoivent ce dont Engram se souvient au début d&apos;une session et pendant leur travail. Vous pouvez les retirer à tout moment dans les Réglages.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="75"/>
        <source>%1 (hooks already installed)</source>
        <translation>%1 (hooks déjà installés)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="98"/>
        <source>Engram&apos;s hooks were installed for %1</source>
        <translation>Les hooks d&apos;Engram ont été installés pour %1</translation>
    </message>
</context>
<context>
    <name>HooksPanel</name>
    <message>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="116"/>
        <source>Hooks let Claude Code, Codex and Gemini CLI receive Engram&apos;s memory in this project when a session starts, when you type a prompt and when they open a file.</source>
        <translation>Les hooks permettent à Claude Code, Codex et Gemini CLI de recevoir la mémoire d&apos;Engram dans ce projet au début d&apos;une session, quand vous saisissez une demande et quand ils ouvrent un fichier.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="120"/>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="163"/>
        <source>Looking for agents…</source>
        <translation>Recherche des agents…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="144"/>
        <source>&amp;Install</source>
        <translation>&amp;Installer</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="147"/>
        <source>&amp;Remove</source>
        <translation>&amp;Retirer</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="157"/>
        <source>Installed for this project</source>
        <translation>Installés pour ce projet</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="157"/>
        <source>Not installed</source>
        <translation>Non installés</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="161"/>
        <source>No agent was found on this computer (looked for claude, codex and gemini on PATH).</source>
        <translation>Aucun agent n&apos;a été trouvé sur cet ordinateur (recherche de claude, codex et gemini dans le PATH).</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="180"/>
        <source>Engram&apos;s hooks were added to %1</source>
        <translation>Les hooks d&apos;Engram ont été ajoutés à %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="181"/>
        <source>Engram&apos;s hooks were removed from %1</source>
        <translation>Les hooks d&apos;Engram ont été retirés de %1</translation>
    </message>
</context>
<context>
    <name>IndexWords</name>
    <message>
        <location filename="../desktop/ui/index_words.py" line="19"/>
        <source>Listing files</source>
        <translation>Liste des fichiers</translation>
    </message>
    <message>
        <location filename="../desktop/ui/index_words.py" line="19"/>
        <source>Reading code</source>
        <translation>Lecture du code</translation>
    </message>
    <message>
        <location filename="../desktop/ui/index_words.py" line="20"/>
        <source>Linking symbols</source>
        <translation>Liaison des symboles</translation>
    </message>
    <message>
        <location filename="../desktop/ui/index_words.py" line="20"/>
        <source>Finding modules</source>
        <translation>Recherche des modules</translation>
    </message>
    <message>
        <location filename="../desktop/ui/index_words.py" line="21"/>
        <source>Remembering code</source>
        <translation>Mémorisation du code</translation>
    </message>
    <message>
        <location filename="../desktop/ui/index_words.py" line="21"/>
        <source>Mapping dependencies</source>
        <translation>Carte des dépendances</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/index_words.py" line="29"/>
        <source>%1: %n links written</source>
        <translation>
            <numerusform>%1 : %n lien écrit</numerusform>
            <numerusform>%1 : %n liens écrits</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/index_words.py" line="31"/>
        <source>%1: %2 of %n files</source>
        <translation>
            <numerusform>%1 : %2 sur %n fichier</numerusform>
            <numerusform>%1 : %2 sur %n fichiers</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/index_words.py" line="36"/>
        <source>Engram cannot read this folder (%1). Nothing was indexed; check its permissions.</source>
        <translation>Engram ne peut pas lire ce dossier (%1). Rien n’a été indexé ; vérifiez ses permissions.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/index_words.py" line="37"/>
        <source>permission denied</source>
        <translation>permission refusée</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/index_words.py" line="39"/>
        <source>No source code here: %n files, none of a kind Engram reads (code, scripts, Markdown). Is this the right folder?</source>
        <translation>
            <numerusform>Pas de code source ici : %n fichier, d’aucun type qu’Engram lit (code, scripts, Markdown). Est-ce le bon dossier ?</numerusform>
            <numerusform>Pas de code source ici : %n fichiers, d’aucun type qu’Engram lit (code, scripts, Markdown). Est-ce le bon dossier ?</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/index_words.py" line="42"/>
        <source>This folder is empty: there is nothing to index.</source>
        <translation>Ce dossier est vide : il n’y a rien à indexer.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/index_words.py" line="44"/>
        <source>Indexing was stopped; it resumes the next time the project opens.</source>
        <translation>L’indexation a été arrêtée ; elle reprendra à la prochaine ouverture du projet.</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/index_words.py" line="46"/>
        <source>Indexed %n files</source>
        <translation>
            <numerusform>%n fichier indexé</numerusform>
            <numerusform>%n fichiers indexés</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/index_words.py" line="46"/>
        <source>in %n modules.</source>
        <translation>
            <numerusform>dans %n module.</numerusform>
            <numerusform>dans %n modules.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/index_words.py" line="48"/>
        <source>%n files were skipped as too large (over 1 MB).</source>
        <translation>
            <numerusform>%n fichier a été ignoré car trop gros (plus de 1 Mo).</numerusform>
            <numerusform>%n fichiers ont été ignorés car trop gros (plus de 1 Mo).</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/index_words.py" line="50"/>
        <source>%n files or folders could not be read.</source>
        <translation>
            <numerusform>%n fichier ou dossier n’a pas pu être lu.</numerusform>
            <numerusform>%n fichiers ou dossiers n’ont pas pu être lus.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>LearnedRow</name>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="46"/>
        <source>global</source>
        <translation>global</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="56"/>
        <source>OK</source>
        <translation>OK</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="58"/>
        <source>Right: keep it and raise its confidence</source>
        <translation>Juste : la garder et augmenter sa confiance</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="59"/>
        <source>Edit</source>
        <translation>Modifier</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="61"/>
        <source>Almost right: fix the wording</source>
        <translation>Presque juste : corriger la formulation</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="62"/>
        <source>Forget</source>
        <translation>Oublier</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="64"/>
        <source>Wrong or useless: agents will not see it</source>
        <translation>Fausse ou inutile : les agents ne la verront pas</translation>
    </message>
</context>
<context>
    <name>LessonKinds</name>
    <message>
        <location filename="../desktop/ui/labels.py" line="84"/>
        <source>your instruction</source>
        <translation>votre consigne</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="85"/>
        <source>failed command, then one that worked</source>
        <translation>commande en échec, puis une qui a marché</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="86"/>
        <source>command that worked</source>
        <translation>commande qui a marché</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="87"/>
        <source>error fixed by an edit</source>
        <translation>erreur corrigée par une modification</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="88"/>
        <source>cause stated by the agent</source>
        <translation>cause énoncée par l&apos;agent</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="89"/>
        <source>abandoned approach</source>
        <translation>piste abandonnée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="90"/>
        <source>recorded by an agent</source>
        <translation>enregistré par un agent</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="91"/>
        <source>recurring error</source>
        <translation>erreur récurrente</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="92"/>
        <source>command refused by a hook</source>
        <translation>commande refusée par un hook</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="93"/>
        <source>looked in the wrong place</source>
        <translation>cherché au mauvais endroit</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="94"/>
        <source>checker&apos;s rule</source>
        <translation>règle d&apos;un vérificateur</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="95"/>
        <source>check that passed while a stronger one failed</source>
        <translation>vérification passée alors qu&apos;une plus stricte échouait</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="96"/>
        <source>fact about the project</source>
        <translation>fait sur le projet</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="97"/>
        <source>tests you asked for</source>
        <translation>tests que vous avez demandés</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="98"/>
        <source>tests you reviewed</source>
        <translation>tests que vous avez relus</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="99"/>
        <source>shell left in another folder</source>
        <translation>shell resté dans un autre dossier</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="100"/>
        <source>command rewritten by the agent&apos;s shell tool</source>
        <translation>commande réécrite par l&apos;outil shell de l&apos;agent</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="101"/>
        <source>option the program does not take</source>
        <translation>option que le programme ne prend pas</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="102"/>
        <source>tool call refused, then one that went through</source>
        <translation>appel d’outil refusé, puis un qui est passé</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="103"/>
        <source>type of the project&apos;s own, mixed up with a plain one</source>
        <translation>type propre au projet, confondu avec un type simple</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <location filename="../desktop/ui/main_window.py" line="120"/>
        <source>Open a project to begin.</source>
        <translation>Ouvrez un projet pour commencer.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/main_window.py" line="122"/>
        <source>Also open in another Engram window: changes made there show here after you reopen the project.</source>
        <translation>Aussi ouvert dans une autre fenêtre d’Engram : ce qui y change apparaît ici quand vous rouvrez le projet.</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation type="vanished">&amp;Fichier</translation>
    </message>
    <message>
        <source>&amp;Open Project…</source>
        <translation type="vanished">&amp;Ouvrir un projet…</translation>
    </message>
    <message>
        <source>Open &amp;Recent</source>
        <translation type="vanished">Projets &amp;récents</translation>
    </message>
    <message>
        <source>&amp;Settings…</source>
        <translation type="vanished">&amp;Réglages…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation type="vanished">&amp;Quitter</translation>
    </message>
    <message>
        <source>&amp;Project</source>
        <translation type="vanished">&amp;Projet</translation>
    </message>
    <message>
        <source>&amp;Teach Engram…</source>
        <translation type="vanished">&amp;Apprendre à Engram…</translation>
    </message>
    <message>
        <source>Write down something agents should know</source>
        <translation type="vanished">Noter quelque chose que les agents doivent savoir</translation>
    </message>
    <message>
        <source>&amp;Review Memories…</source>
        <translation type="vanished">&amp;Revoir les mémoires…</translation>
    </message>
    <message>
        <source>Confirm or forget memories that wait for review</source>
        <translation type="vanished">Confirmer ou oublier les mémoires en attente de revue</translation>
    </message>
    <message>
        <source>Resolve &amp;Conflicts…</source>
        <translation type="vanished">Résoudre les &amp;conflits…</translation>
    </message>
    <message>
        <source>Decide between memories that disagree</source>
        <translation type="vanished">Trancher entre des mémoires qui se contredisent</translation>
    </message>
    <message>
        <source>&amp;Get to Know This Project…</source>
        <translation type="vanished">&amp;Découvrir ce projet…</translation>
    </message>
    <message>
        <source>Index the code and import agent rule files</source>
        <translation type="vanished">Indexer le code et importer les fichiers de règles des agents</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation type="vanished">&amp;Affichage</translation>
    </message>
    <message>
        <source>&amp;Memory Panel</source>
        <translation type="vanished">Panneau &amp;mémoire</translation>
    </message>
    <message>
        <source>Show or hide the memory panel (%1)</source>
        <translation type="vanished">Afficher ou masquer le panneau mémoire (%1)</translation>
    </message>
    <message>
        <source>Last Session &amp;Summary…</source>
        <translation type="vanished">&amp;Résumé de la dernière session…</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation type="vanished">&amp;Aide</translation>
    </message>
    <message>
        <source>Guided &amp;Tour (Sample Project)</source>
        <translation type="vanished">&amp;Visite guidée (projet d&apos;exemple)</translation>
    </message>
    <message>
        <source>Open a sample project Engram creates, with a scripted agent; your projects are not touched</source>
        <translation type="vanished">Ouvrir un projet d&apos;exemple créé par Engram, avec un agent scripté ; vos projets ne sont pas modifiés</translation>
    </message>
    <message>
        <source>&amp;About Engram</source>
        <translation type="vanished">À &amp;propos d’Engram</translation>
    </message>
    <message>
        <source>Engram %1
Long-term memory for AI coding agents.</source>
        <translation type="vanished">Engram %1
Mémoire à long terme pour les agents de code IA.</translation>
    </message>
    <message>
        <source>Switch project</source>
        <translation type="vanished">Changer de projet</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation type="vanished">Réglages</translation>
    </message>
    <message>
        <source>Models, keys, data, language, trust</source>
        <translation type="vanished">Modèles, clés, données, langue, confiance</translation>
    </message>
    <message>
        <source>Guided tour (sample project)</source>
        <translation type="vanished">Visite guidée (projet d’exemple)</translation>
    </message>
    <message>
        <source>No project open</source>
        <translation type="vanished">Aucun projet ouvert</translation>
    </message>
    <message>
        <source>Open another folder…</source>
        <translation type="vanished">Ouvrir un autre dossier…</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation type="vanished">Mémoire</translation>
    </message>
    <message>
        <location filename="../desktop/ui/main_window.py" line="137"/>
        <source>Removed %1 from the recent projects</source>
        <translation>%1 retiré des projets récents</translation>
    </message>
    <message>
        <location filename="../desktop/ui/main_window.py" line="150"/>
        <source>Open a project folder</source>
        <translation>Ouvrir un dossier de projet</translation>
    </message>
    <message>
        <location filename="../desktop/ui/main_window.py" line="156"/>
        <source>Opening %1…</source>
        <translation>Ouverture de %1…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/main_window.py" line="178"/>
        <source>Damaged memory</source>
        <translation>Mémoire endommagée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/main_window.py" line="180"/>
        <source>Move the damaged file aside (it is kept, renamed) and start with an empty memory?</source>
        <translation>Mettre le fichier endommagé de côté (il est conservé, renommé) et repartir d’une mémoire vide ?</translation>
    </message>
    <message>
        <location filename="../desktop/ui/main_window.py" line="184"/>
        <source>Damaged file kept as %1</source>
        <translation>Fichier endommagé conservé sous %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/main_window.py" line="187"/>
        <source>Cannot open project</source>
        <translation>Impossible d’ouvrir le projet</translation>
    </message>
    <message>
        <location filename="../desktop/ui/main_window.py" line="199"/>
        <source>Opened %1</source>
        <translation>%1 ouvert</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/main_window.py" line="217"/>
        <source>Learned %n memories from past agent sessions</source>
        <translation>
            <numerusform>%n mémoire apprise des sessions d&apos;agents passées</numerusform>
            <numerusform>%n mémoires apprises des sessions d&apos;agents passées</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/main_window.py" line="309"/>
        <source>Cannot open the tour</source>
        <translation>Impossible d&apos;ouvrir la visite</translation>
    </message>
    <message>
        <location filename="../desktop/ui/main_window.py" line="365"/>
        <source>Language changed. Dialogs already open keep the old language until reopened.</source>
        <translation>Langue changée. Les fenêtres de dialogue déjà ouvertes gardent l’ancienne langue jusqu’à leur réouverture.</translation>
    </message>
</context>
<context>
    <name>MemoryBrowser</name>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="91"/>
        <source>Search memories…</source>
        <translation>Rechercher dans les mémoires…</translation>
    </message>
    <message>
        <source>All types</source>
        <translation type="vanished">Tous les types</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="95"/>
        <source>All memories</source>
        <translation>Toutes les mémoires</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="101"/>
        <source>Code index (not memories)</source>
        <translation>Index du code (pas des mémoires)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="104"/>
        <source>Not forgotten</source>
        <translation>Non oubliées</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="109"/>
        <source>All scopes</source>
        <translation>Toutes les portées</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="114"/>
        <source>All sources</source>
        <translation>Toutes les sources</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="117"/>
        <source>Filter by type</source>
        <translation>Filtrer par type</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="118"/>
        <source>Filter by status</source>
        <translation>Filtrer par état</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="119"/>
        <source>Filter by scope</source>
        <translation>Filtrer par portée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="120"/>
        <source>Filter by where the memory came from</source>
        <translation>Filtrer selon l’origine de la mémoire</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="149"/>
        <source>&amp;Add…</source>
        <translation>&amp;Ajouter…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="150"/>
        <source>&amp;Edit…</source>
        <translation>&amp;Modifier…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="151"/>
        <location filename="../desktop/ui/memory_panel.py" line="300"/>
        <source>&amp;Pin</source>
        <translation>É&amp;pingler</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="152"/>
        <location filename="../desktop/ui/memory_panel.py" line="302"/>
        <source>&amp;Forget</source>
        <translation>&amp;Oublier</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="153"/>
        <source>Flag &amp;wrong…</source>
        <translation>Signaler &amp;fausse…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="156"/>
        <source>&amp;Team</source>
        <translation>&amp;Équipe</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="159"/>
        <source>Share with the team</source>
        <translation>Partager avec l&apos;équipe</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="159"/>
        <source>Keep personal</source>
        <translation>Garder personnelle</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="160"/>
        <source>Follow the shared types</source>
        <translation>Suivre les types partagés</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="163"/>
        <source>Correct this memory: outdated, partly wrong, not applicable or incorrect</source>
        <translation>Corriger cette mémoire : dépassée, en partie fausse, non applicable ou incorrecte</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="168"/>
        <source>Teach Engram something agents should know</source>
        <translation>Apprendre à Engram quelque chose que les agents doivent savoir</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="169"/>
        <source>Pinned memories are always given to agents and never fade</source>
        <translation>Les mémoires épinglées sont toujours données aux agents et ne s’estompent jamais</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="170"/>
        <source>Agents will no longer see this memory</source>
        <translation>Les agents ne verront plus cette mémoire</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/memory_panel.py" line="215"/>
        <source>%n memories</source>
        <translation>
            <numerusform>%n mémoire</numerusform>
            <numerusform>%n mémoires</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/memory_panel.py" line="215"/>
        <source>%n code chunks</source>
        <translation>
            <numerusform>%n extrait de code</numerusform>
            <numerusform>%n extraits de code</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="253"/>
        <source>Select a memory to see where it came from.</source>
        <translation>Sélectionnez une mémoire pour voir d’où elle vient.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="300"/>
        <source>Un&amp;pin</source>
        <translation>Désé&amp;pingler</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="302"/>
        <source>&amp;Restore</source>
        <translation>&amp;Restaurer</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="309"/>
        <location filename="../desktop/ui/memory_panel.py" line="314"/>
        <source>Not saved</source>
        <translation>Non enregistré</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="324"/>
        <source>Memory saved</source>
        <translation>Mémoire enregistrée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="335"/>
        <source>Memory updated</source>
        <translation>Mémoire mise à jour</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="344"/>
        <source>Team sharing updated</source>
        <translation>Partage d&apos;équipe mis à jour</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="351"/>
        <source>Unpinned</source>
        <translation>Désépinglée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="351"/>
        <source>Pinned</source>
        <translation>Épinglée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="359"/>
        <source>Memory restored</source>
        <translation>Mémoire restaurée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="362"/>
        <source>Memory forgotten</source>
        <translation>Mémoire oubliée</translation>
    </message>
</context>
<context>
    <name>MemoryDetail</name>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="37"/>
        <source>Evidence</source>
        <translation>Preuves</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="39"/>
        <source>Sessions it was learned from: %1</source>
        <translation>Sessions dont elle a été apprise : %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="49"/>
        <source>linked events: %1</source>
        <translation>événements liés : %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="63"/>
        <source>Imported from %1</source>
        <translation>Importée de %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="65"/>
        <source>section “%1”</source>
        <translation>section « %1 »</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="69"/>
        <source>Learned in session %1</source>
        <translation>Apprise pendant la session %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="72"/>
        <source>Taught with /remember</source>
        <translation>Enseignée avec /remember</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="83"/>
        <source>Provenance</source>
        <translation>Provenance</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="84"/>
        <source>Why this exists</source>
        <translation>Pourquoi elle existe</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="85"/>
        <source>Why was this retrieved for “%1”?</source>
        <translation>Pourquoi a-t-elle été retrouvée pour « %1 » ?</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="86"/>
        <source>It matches the filters but would not rank among the top results.</source>
        <translation>Elle correspond aux filtres mais ne figurerait pas parmi les meilleurs résultats.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="89"/>
        <source>Total</source>
        <translation>Total</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="90"/>
        <source>Superseded by</source>
        <translation>Remplacée par</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="91"/>
        <source>History</source>
        <translation>Historique</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="94"/>
        <source>Type</source>
        <translation>Type</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="95"/>
        <source>Status</source>
        <translation>État</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="97"/>
        <source>Confidence</source>
        <translation>Confiance</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="99"/>
        <source>verified by you</source>
        <translation>vérifiée par vous</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="101"/>
        <source>Source</source>
        <translation>Source</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="102"/>
        <source>shared by %1</source>
        <translation>partagé par %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="104"/>
        <source>Scope</source>
        <translation>Portée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="105"/>
        <source>Files</source>
        <translation>Fichiers</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="106"/>
        <source>Modules</source>
        <translation>Modules</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="107"/>
        <source>Tags</source>
        <translation>Étiquettes</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="108"/>
        <source>Created</source>
        <translation>Créée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="109"/>
        <source>Times used</source>
        <translation>Utilisations</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="111"/>
        <source>Sessions</source>
        <translation>Sessions</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="114"/>
        <source>Commit</source>
        <translation>Commit</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="150"/>
        <source>you</source>
        <translation>vous</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="151"/>
        <source>an agent</source>
        <translation>un agent</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="152"/>
        <source>an import</source>
        <translation>un import</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="170"/>
        <source>learned from a session</source>
        <translation>appris d’une session</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="174"/>
        <source>you declined `%1` in session %2</source>
        <translation>vous avez refusé `%1` dans la session %2</translation>
    </message>
</context>
<context>
    <name>MemoryEditor</name>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="39"/>
        <source>Edit memory</source>
        <translation>Modifier la mémoire</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="39"/>
        <source>Teach Engram</source>
        <translation>Apprendre à Engram</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="42"/>
        <source>What should agents know? e.g. “Run migrations with make migrate, never with alembic directly.”</source>
        <translation>Que doivent savoir les agents ? p. ex. « Lancer les migrations avec make migrate, jamais directement avec alembic. »</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="49"/>
        <source>Whole project</source>
        <translation>Tout le projet</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="50"/>
        <source>One module</source>
        <translation>Un module</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="51"/>
        <source>This task</source>
        <translation>Cette tâche</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="52"/>
        <source>This session</source>
        <translation>Cette session</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="55"/>
        <source>src/auth/tokens.ts, src/auth/session.ts</source>
        <translation>src/auth/tokens.ts, src/auth/session.ts</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="57"/>
        <source>security, build</source>
        <translation>sécurité, build</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="65"/>
        <source>&amp;Memory</source>
        <translation>&amp;Mémoire</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="66"/>
        <source>&amp;Type</source>
        <translation>&amp;Type</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="67"/>
        <source>&amp;Applies to</source>
        <translation>&amp;S’applique à</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="68"/>
        <source>Related &amp;files</source>
        <translation>&amp;Fichiers liés</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="69"/>
        <source>Ta&amp;gs</source>
        <translation>Éti&amp;quettes</translation>
    </message>
    <message>
        <source>&amp;Confidence</source>
        <translation type="vanished">&amp;Confiance</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/memory_editor.py" line="114"/>
        <source>A memory needs some text (at most %n characters).</source>
        <translation>
            <numerusform>Une mémoire doit contenir du texte (au plus %n caractère).</numerusform>
            <numerusform>Une mémoire doit contenir du texte (au plus %n caractères).</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>MemoryListModel</name>
    <message>
        <location filename="../desktop/ui/memory_model.py" line="220"/>
        <source>#</source>
        <translation>n°</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_model.py" line="220"/>
        <source>Type</source>
        <translation>Type</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_model.py" line="220"/>
        <source>Memory</source>
        <translation>Mémoire</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_model.py" line="220"/>
        <source>Confidence</source>
        <translation>Confiance</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_model.py" line="221"/>
        <source>Status</source>
        <translation>État</translation>
    </message>
</context>
<context>
    <name>MemoryModelChooser</name>
    <message>
        <location filename="../desktop/ui/dialogs/memory_model.py" line="28"/>
        <source>Learn with a model you already use (optional)</source>
        <translation>Apprendre avec un modèle que vous utilisez déjà (facultatif)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/memory_model.py" line="33"/>
        <source>Engram&apos;s rules learn from your sessions for free. An agent you are logged into can also write memories from each finished session: every one is checked against what the session showed and waits for your review. You can change this in Settings.</source>
        <translation>Les règles d&apos;Engram apprennent de vos sessions gratuitement. Un agent auquel vous êtes connecté peut aussi écrire des mémoires à partir de chaque session terminée : chacune est vérifiée par rapport à ce que la session a montré et attend votre relecture. Vous pouvez changer ce choix dans les Réglages.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/memory_model.py" line="38"/>
        <source>Rules only (nothing is sent, nothing is spent)</source>
        <translation>Règles seules (rien n&apos;est envoyé, rien n&apos;est dépensé)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/memory_model.py" line="53"/>
        <source>%1: one request of at most %2 tokens per finished session, on your account</source>
        <translation>%1 : une requête d&apos;au plus %2 jetons par session terminée, sur votre compte</translation>
    </message>
</context>
<context>
    <name>MemoryPanel</name>
    <message>
        <location filename="../desktop/ui/panel/panel.py" line="40"/>
        <source>&amp;Health</source>
        <translation>&amp;Santé</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/panel.py" line="41"/>
        <source>Module &amp;map</source>
        <translation>&amp;Carte des modules</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/panel.py" line="42"/>
        <source>&amp;Browse</source>
        <translation>&amp;Parcourir</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/panel.py" line="43"/>
        <source>As&amp;k Memory</source>
        <translation>&amp;Interroger la mémoire</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/panel.py" line="44"/>
        <source>&amp;Agents</source>
        <translation>&amp;Agents</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/panel.py" line="45"/>
        <source>How healthy this project&apos;s memory is</source>
        <translation>L’état de santé de la mémoire de ce projet</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/panel.py" line="46"/>
        <source>Modules of the code, their dependencies and what memory knows about them</source>
        <translation>Les modules du code, leurs dépendances et ce que la mémoire en sait</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/panel.py" line="47"/>
        <source>Search, filter and correct memories</source>
        <translation>Rechercher, filtrer et corriger les mémoires</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/panel.py" line="48"/>
        <source>Ask a question; the answer cites memories</source>
        <translation>Posez une question ; la réponse cite des mémoires</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/panel.py" line="49"/>
        <source>What Claude Code, Codex and Gemini CLI sessions were told by Engram&apos;s hooks</source>
        <translation>Ce que les hooks d&apos;Engram ont transmis aux sessions Claude Code, Codex et Gemini CLI</translation>
    </message>
</context>
<context>
    <name>MemoryScopes</name>
    <message>
        <location filename="../desktop/ui/labels.py" line="58"/>
        <source>Whole project</source>
        <translation>Tout le projet</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="59"/>
        <source>One module</source>
        <translation>Un module</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="60"/>
        <source>This task</source>
        <translation>Cette tâche</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="61"/>
        <source>This session</source>
        <translation>Cette session</translation>
    </message>
</context>
<context>
    <name>MemorySources</name>
    <message>
        <location filename="../desktop/ui/labels.py" line="45"/>
        <source>Agent (explicit)</source>
        <translation>Agent (explicite)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="46"/>
        <source>Observer (inferred)</source>
        <translation>Observateur (déduit)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="47"/>
        <source>QA (automatic)</source>
        <translation>QA (automatique)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="48"/>
        <source>MCP (automatic)</source>
        <translation>MCP (automatique)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="49"/>
        <source>Commit (automatic)</source>
        <translation>Commit (automatique)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="50"/>
        <source>Taught by you</source>
        <translation>Apprise par vous</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="51"/>
        <source>Imported</source>
        <translation>Importée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="52"/>
        <source>Code index</source>
        <translation>Index du code</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="53"/>
        <source>Your correction</source>
        <translation>Votre correction</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="54"/>
        <source>Taught by a teammate</source>
        <translation>Enseigné par un coéquipier</translation>
    </message>
</context>
<context>
    <name>MemoryStatus</name>
    <message>
        <location filename="../desktop/ui/labels.py" line="37"/>
        <source>Active</source>
        <translation>Active</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="38"/>
        <source>Needs review</source>
        <translation>À revoir</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="39"/>
        <source>Stale</source>
        <translation>Périmée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="40"/>
        <source>Forgotten</source>
        <translation>Oubliée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="41"/>
        <source>Candidate</source>
        <translation>Candidate</translation>
    </message>
</context>
<context>
    <name>MemoryTypes</name>
    <message>
        <location filename="../desktop/ui/labels.py" line="16"/>
        <source>Gotcha</source>
        <translation>Piège</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="17"/>
        <source>Decision</source>
        <translation>Décision</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="18"/>
        <source>Preference</source>
        <translation>Préférence</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="19"/>
        <source>Pattern</source>
        <translation>Motif</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="20"/>
        <source>Requirement</source>
        <translation>Exigence</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="21"/>
        <source>Error pattern</source>
        <translation>Motif d’erreur</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="22"/>
        <source>Module insight</source>
        <translation>Connaissance de module</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="23"/>
        <source>Prefetch pattern</source>
        <translation>Motif de préchargement</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="24"/>
        <source>Work state</source>
        <translation>État du travail</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="25"/>
        <source>Causal dependency</source>
        <translation>Dépendance causale</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="26"/>
        <source>Task calibration</source>
        <translation>Calibrage de tâche</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="27"/>
        <source>E2E observation</source>
        <translation>Observation E2E</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="28"/>
        <source>Dead end</source>
        <translation>Impasse</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="29"/>
        <source>Work outcome</source>
        <translation>Résultat de travail</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="30"/>
        <source>Workflow recipe</source>
        <translation>Recette de travail</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="31"/>
        <source>Context cost</source>
        <translation>Coût de contexte</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="32"/>
        <source>Code</source>
        <translation>Code</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="33"/>
        <source>Note</source>
        <translation>Note</translation>
    </message>
</context>
<context>
    <name>Messages</name>
    <message>
        <location filename="../desktop/ui/messages.py" line="31"/>
        <source>The memory database of this project is damaged. Engram did not change it.</source>
        <translation>La base de mémoire de ce projet est endommagée. Engram ne l’a pas modifiée.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="34"/>
        <source>This project&apos;s memory was saved by a newer version of Engram. Update Engram to open it; nothing was changed.</source>
        <translation>La mémoire de ce projet a été enregistrée par une version plus récente d’Engram. Mettez Engram à jour pour l’ouvrir ; rien n’a été modifié.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="39"/>
        <source>Engram cannot write to its data folder. Check its permissions or choose another data location in Settings.</source>
        <translation>Engram ne peut pas écrire dans son dossier de données. Vérifiez ses droits ou choisissez un autre emplacement dans les Réglages.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="44"/>
        <source>The disk is full. The last change was not saved; everything saved before is safe.</source>
        <translation>Le disque est plein. La dernière modification n’a pas été enregistrée ; tout ce qui l’a été avant est intact.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="47"/>
        <source>Another Engram window kept the memory busy. Please try again.</source>
        <translation>Une autre fenêtre d’Engram occupait la mémoire. Veuillez réessayer.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="48"/>
        <source>This text contains what looks like a secret, so it was not saved:</source>
        <translation>Ce texte contient ce qui ressemble à un secret, il n’a donc pas été enregistré :</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="51"/>
        <source>That memory no longer exists.</source>
        <translation>Cette mémoire n’existe plus.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="52"/>
        <source>This input was not accepted:</source>
        <translation>Cette saisie n’a pas été acceptée :</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="53"/>
        <source>The project is closing; the change was not saved.</source>
        <translation>Le projet se ferme ; la modification n’a pas été enregistrée.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="54"/>
        <source>Engram could not do this.</source>
        <translation>Engram n&apos;a pas pu faire cela.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="55"/>
        <source>The memory database could not be used.</source>
        <translation>La base de mémoire n&apos;a pas pu être utilisée.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="56"/>
        <source>The model server did not answer. Is it running, and is its address right in Settings?</source>
        <translation>Le serveur du modèle n&apos;a pas répondu. Est-il lancé, et son adresse est-elle correcte dans les Réglages ?</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="57"/>
        <source>The model server took too long to answer.</source>
        <translation>Le serveur du modèle a mis trop de temps à répondre.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="58"/>
        <source>The model provider refused the API key. Set a valid one in Settings.</source>
        <translation>Le fournisseur du modèle a refusé la clé d&apos;API. Indiquez-en une valide dans les Réglages.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="59"/>
        <source>The model provider is limiting requests. Try again shortly.</source>
        <translation>Le fournisseur du modèle limite les requêtes. Réessayez dans un instant.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="60"/>
        <source>The model provider reported an error.</source>
        <translation>Le fournisseur du modèle a signalé une erreur.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="61"/>
        <source>The model provider answered with an HTTP error.</source>
        <translation>Le fournisseur du modèle a répondu par une erreur HTTP.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="62"/>
        <source>The model server answered something Engram does not understand.</source>
        <translation>Le serveur du modèle a répondu quelque chose qu&apos;Engram ne comprend pas.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="63"/>
        <source>The connection to the model closed while it was answering.</source>
        <translation>La connexion au modèle s&apos;est fermée pendant sa réponse.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="64"/>
        <source>The embedding server answered something Engram does not understand.</source>
        <translation>Le serveur de plongements a répondu quelque chose qu&apos;Engram ne comprend pas.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="65"/>
        <source>No API key is stored for this provider. Add one in Settings; it is kept in the system keyring.</source>
        <translation>Aucune clé d&apos;API n&apos;est enregistrée pour ce fournisseur. Ajoutez-en une dans les Réglages ; elle est conservée dans le trousseau du système.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="66"/>
        <source>No secure credential store is available on this computer, so no API key or team connection can be kept.</source>
        <translation>Aucun coffre sécurisé n&apos;est disponible sur cet ordinateur : aucune clé d&apos;API ni connexion d&apos;équipe ne peut être conservée.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="78"/>
        <source>This is not a PostgreSQL connection string: give it as postgresql://user:password@host/database.</source>
        <translation>Ce n&apos;est pas une chaîne de connexion PostgreSQL : donnez-la sous la forme postgresql://utilisateur:motdepasse@hôte/base.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="67"/>
        <source>The system keyring failed (locked or access denied).</source>
        <translation>Le trousseau du système a échoué (verrouillé ou accès refusé).</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="68"/>
        <source>This model is not available. Pull it with Ollama or choose another in Settings.</source>
        <translation>Ce modèle n&apos;est pas disponible. Téléchargez-le avec Ollama ou choisissez-en un autre dans les Réglages.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="69"/>
        <source>Unknown provider.</source>
        <translation>Fournisseur inconnu.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="70"/>
        <source>Only you can do this to that memory; an agent asked for it and was refused.</source>
        <translation>Seul·e vous pouvez faire cela à ce souvenir ; un agent l’a demandé et a été refusé.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="71"/>
        <source>Team sync could not do this.</source>
        <translation>La synchronisation d’équipe n’a pas pu faire cela.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="72"/>
        <source>This project is not connected to a team.</source>
        <translation>Ce projet n’est relié à aucune équipe.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="73"/>
        <source>The team server cannot be reached.</source>
        <translation>Le serveur d’équipe est injoignable.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="74"/>
        <source>The team server refused these credentials.</source>
        <translation>Le serveur d’équipe a refusé ces identifiants.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="75"/>
        <source>The team server was upgraded by a newer Engram; update Engram to sync with it.</source>
        <translation>Le serveur d’équipe a été mis à jour par un Engram plus récent ; mettez Engram à jour pour synchroniser.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="76"/>
        <source>The team server is not ready for this version of Engram; ask the team admin to run engram team init.</source>
        <translation>Le serveur d’équipe n’est pas prêt pour cette version d’Engram ; demandez à l’administrateur de l’équipe de lancer engram team init.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="77"/>
        <source>These credentials do not belong to a team on this server.</source>
        <translation>Ces identifiants n’appartiennent à aucune équipe sur ce serveur.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="79"/>
        <source>The agent stopped because of an error.</source>
        <translation>L&apos;agent s&apos;est arrêté à cause d&apos;une erreur.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="80"/>
        <source>The agent&apos;s action was not allowed.</source>
        <translation>L&apos;action de l&apos;agent n&apos;a pas été autorisée.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="81"/>
        <source>The agent tried to reach a file outside the project folder.</source>
        <translation>L&apos;agent a tenté d&apos;accéder à un fichier hors du dossier du projet.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="82"/>
        <source>The tour agent ran out of scripted turns.</source>
        <translation>L&apos;agent de la visite n&apos;a plus de tours scriptés.</translation>
    </message>
    <message>
        <source>That agent&apos;s command-line tool is not installed.</source>
        <translation type="vanished">L&apos;outil en ligne de commande de cet agent n&apos;est pas installé.</translation>
    </message>
    <message>
        <source>The external agent exited with an error.</source>
        <translation type="vanished">L&apos;agent externe s&apos;est terminé avec une erreur.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="83"/>
        <source>That file or symbol is not in the code graph.</source>
        <translation>Ce fichier ou ce symbole n&apos;est pas dans le graphe de code.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="84"/>
        <source>A transcript could not be read.</source>
        <translation>Une transcription n&apos;a pas pu être lue.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="85"/>
        <source>The scripted tour agent runs only on the tour&apos;s sample project.</source>
        <translation>L&apos;agent scripté de la visite ne fonctionne que sur le projet d&apos;exemple de la visite.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="23"/>
        <source>Something went wrong inside Engram (a bug): %1</source>
        <translation>Un problème est survenu dans Engram (un bogue) : %1</translation>
    </message>
</context>
<context>
    <name>ModelNotice</name>
    <message>
        <location filename="../desktop/ui/session/setup_notice.py" line="26"/>
        <source>Open &amp;Settings…</source>
        <translation>Ouvrir les &amp;Réglages…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/setup_notice.py" line="27"/>
        <source>Take the guided &amp;tour</source>
        <translation>Faire la &amp;visite guidée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/setup_notice.py" line="28"/>
        <source>A sample project Engram creates for the tour; your projects are not touched</source>
        <translation>Un projet d&apos;exemple créé par Engram pour la visite ; vos projets ne sont pas modifiés</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/setup_notice.py" line="46"/>
        <source>&lt;b&gt;No model is set up for the agent.&lt;/b&gt;</source>
        <translation>&lt;b&gt;Aucun modèle n&apos;est configuré pour l&apos;agent.&lt;/b&gt;</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/setup_notice.py" line="48"/>
        <source>Ollama is running on this machine with %1. Choose Ollama and a model in Settings.</source>
        <translation>Ollama fonctionne sur cette machine avec %1. Choisissez Ollama et un modèle dans les Réglages.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/setup_notice.py" line="51"/>
        <source>Ollama is running on this machine but has no model yet: run &lt;code&gt;ollama pull %1&lt;/code&gt;, then choose it in Settings.</source>
        <translation>Ollama fonctionne sur cette machine mais n&apos;a encore aucun modèle : lancez &lt;code&gt;ollama pull %1&lt;/code&gt;, puis choisissez-le dans les Réglages.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/setup_notice.py" line="55"/>
        <source>Ollama was not found on this machine: install it from ollama.com and run &lt;code&gt;ollama pull %1&lt;/code&gt;, or use a hosted model.</source>
        <translation>Ollama est introuvable sur cette machine : installez-le depuis ollama.com et lancez &lt;code&gt;ollama pull %1&lt;/code&gt;, ou utilisez un modèle hébergé.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/setup_notice.py" line="58"/>
        <source>For a hosted model, choose OpenAI-compatible or Anthropic in Settings and add its API key (kept in the system keyring).</source>
        <translation>Pour un modèle hébergé, choisissez « compatible OpenAI » ou Anthropic dans les Réglages et ajoutez sa clé d&apos;API (conservée dans le trousseau du système).</translation>
    </message>
</context>
<context>
    <name>ModuleCard</name>
    <message>
        <location filename="../desktop/ui/panel/module_map.py" line="65"/>
        <source>Show the files of this module</source>
        <translation>Afficher les fichiers de ce module</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/module_map.py" line="67"/>
        <source>Module %1 in the code graph</source>
        <translation>Module %1 du graphe de code</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/panel/module_map.py" line="68"/>
        <source>%n files</source>
        <translation>
            <numerusform>%n fichier</numerusform>
            <numerusform>%n fichiers</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/panel/module_map.py" line="69"/>
        <source>%n memories</source>
        <translation>
            <numerusform>%n mémoire</numerusform>
            <numerusform>%n mémoires</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/module_map.py" line="70"/>
        <source>uses: %1</source>
        <translation>utilise : %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/module_map.py" line="71"/>
        <source>used by: %1</source>
        <translation>utilisé par : %1</translation>
    </message>
</context>
<context>
    <name>ModuleMap</name>
    <message>
        <location filename="../desktop/ui/panel/module_map.py" line="102"/>
        <source>Reading the module map…</source>
        <translation>Lecture de la carte des modules…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/module_map.py" line="112"/>
        <source>File or file:symbol, e.g. src/auth/tokens.py</source>
        <translation>Fichier ou fichier:symbole, p. ex. src/auth/tokens.py</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/module_map.py" line="113"/>
        <source>&amp;Impact</source>
        <translation>&amp;Impact</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/module_map.py" line="115"/>
        <source>What may break if this changes</source>
        <translation>Ce qui peut casser si ceci change</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/module_map.py" line="118"/>
        <source>Depends on it</source>
        <translation>En dépend</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/module_map.py" line="118"/>
        <source>Symbols</source>
        <translation>Symboles</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/panel/module_map.py" line="171"/>
        <source>%n modules</source>
        <translation>
            <numerusform>%n module</numerusform>
            <numerusform>%n modules</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/panel/module_map.py" line="172"/>
        <source>%n dependencies between modules</source>
        <translation>
            <numerusform>%n dépendance entre modules</numerusform>
            <numerusform>%n dépendances entre modules</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/module_map.py" line="173"/>
        <source>No code graph yet: index the project (first run) to see its modules.</source>
        <translation>Pas encore de graphe du code : indexez le projet (premier lancement) pour voir ses modules.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/module_map.py" line="192"/>
        <source>Not in the code graph: %1</source>
        <translation>Absent du graphe du code : %1</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/panel/module_map.py" line="194"/>
        <source>%n files may be affected</source>
        <translation>
            <numerusform>%n fichier peut être touché</numerusform>
            <numerusform>%n fichiers peuvent être touchés</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/module_map.py" line="196"/>
        <source>Depth %1</source>
        <translation>Profondeur %1</translation>
    </message>
</context>
<context>
    <name>Onboarding</name>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="65"/>
        <source>Getting to know %1</source>
        <translation>Découverte de %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="80"/>
        <source>No language model is set up. Engram still indexes your code, keeps and searches memories, and the offline demo agent works. Agents without memory rediscover your codebase every session: install Ollama and run “ollama pull %1”, or choose a provider in Settings.</source>
        <translation>Aucun modèle de langage n’est configuré. Engram indexe quand même votre code, conserve et recherche les mémoires, et l’agent de démonstration hors ligne fonctionne. Sans mémoire, les agents redécouvrent votre code à chaque session : installez Ollama et lancez « ollama pull %1 », ou choisissez un fournisseur dans les Réglages.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="96"/>
        <source>Getting to know your project</source>
        <translation>Découverte de votre projet</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="100"/>
        <source>Looking at the files…</source>
        <translation>Examen des fichiers…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="102"/>
        <source>&amp;Continue</source>
        <translation>&amp;Continuer</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="104"/>
        <source>Indexing goes on in the background</source>
        <translation>L’indexation continue en arrière-plan</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="106"/>
        <source>Close and remove from recent projects</source>
        <translation>Fermer et retirer des projets récents</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="108"/>
        <source>This folder has nothing Engram can index; nothing is deleted</source>
        <translation>Ce dossier ne contient rien qu’Engram puisse indexer ; rien n’est supprimé</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="131"/>
        <source>The code graph is not available; skipping indexing.</source>
        <translation>Le graphe du code n’est pas disponible ; indexation ignorée.</translation>
    </message>
    <message>
        <source>Listing files</source>
        <translation type="vanished">Liste des fichiers</translation>
    </message>
    <message>
        <source>Reading code</source>
        <translation type="vanished">Lecture du code</translation>
    </message>
    <message>
        <source>Linking symbols</source>
        <translation type="vanished">Liaison des symboles</translation>
    </message>
    <message>
        <source>Finding modules</source>
        <translation type="vanished">Recherche des modules</translation>
    </message>
    <message>
        <source>Remembering code</source>
        <translation type="vanished">Mémorisation du code</translation>
    </message>
    <message>
        <source>Mapping dependencies</source>
        <translation type="vanished">Cartographie des dépendances</translation>
    </message>
    <message>
        <source>%1: %2 of %3 files</source>
        <translation type="vanished">%1 : %2 fichiers sur %3</translation>
    </message>
    <message numerus="yes">
        <source>Indexed %n files</source>
        <translation type="vanished">
            <numerusform>%n fichier indexé</numerusform>
            <numerusform>%n fichiers indexés</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>in %n modules.</source>
        <translation type="vanished">
            <numerusform>dans %n module.</numerusform>
            <numerusform>dans %n modules.</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="164"/>
        <source>Indexing failed; the details are in the log. Memories still work without the code index.</source>
        <translation>L’indexation a échoué ; les détails sont dans le journal. Les mémoires fonctionnent sans l’index du code.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="178"/>
        <source>Untick a rule to leave it out</source>
        <translation>Décochez une règle pour l’écarter</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="180"/>
        <source>&amp;Import selected</source>
        <translation>&amp;Importer la sélection</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="182"/>
        <source>&amp;Skip</source>
        <translation>&amp;Passer</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/dialogs/onboarding.py" line="206"/>
        <source>Found %n rules. Import them as memories?</source>
        <translation>
            <numerusform>%n règle trouvée. L’importer comme mémoire ?</numerusform>
            <numerusform>%n règles trouvées. Les importer comme mémoires ?</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="208"/>
        <source>From %1. What you keep ticked is confirmed as yours; untick what agents should not be told.</source>
        <translation>Depuis %1. Ce que vous laissez coché est confirmé comme venant de vous ; décochez ce que les agents ne doivent pas savoir.</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/dialogs/onboarding.py" line="235"/>
        <source>%n rules imported and confirmed</source>
        <translation>
            <numerusform>%n règle importée et confirmée</numerusform>
            <numerusform>%n règles importées et confirmées</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="242"/>
        <source>Tell me if anything looks wrong — you are always the authority.</source>
        <translation>Dites-moi si quelque chose semble faux — c’est toujours vous qui avez le dernier mot.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="248"/>
        <source>&amp;Confirm</source>
        <translation>&amp;Confirmer</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="250"/>
        <source>&amp;Forget</source>
        <translation>&amp;Oublier</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="252"/>
        <source>Confirm &amp;all remaining</source>
        <translation>Confirmer &amp;tout le reste</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="254"/>
        <source>Right (your edits to the text are saved too)</source>
        <translation>Juste (vos modifications du texte sont aussi enregistrées)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="270"/>
        <source>Review memories</source>
        <translation>Revoir les mémoires</translation>
    </message>
</context>
<context>
    <name>ProviderChoice</name>
    <message>
        <location filename="../desktop/ui/session/provider_choice.py" line="23"/>
        <source>Which model runs the agent (set it up in Settings).</source>
        <translation>Le modèle qui fait tourner l&apos;agent (à configurer dans les Réglages).</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/provider_choice.py" line="24"/>
        <source>Guided tour agent (sample project only)</source>
        <translation>Agent de la visite guidée (projet d&apos;exemple uniquement)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/provider_choice.py" line="25"/>
        <source>Ollama (local)</source>
        <translation>Ollama (local)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/provider_choice.py" line="25"/>
        <source>OpenAI-compatible</source>
        <translation>Compatible OpenAI</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/provider_choice.py" line="26"/>
        <source>Anthropic</source>
        <translation>Anthropic</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/provider_choice.py" line="33"/>
        <source>The scripted tour agent changes nothing, so it runs only on the tour&apos;s sample project.</source>
        <translation>L&apos;agent scripté de la visite ne modifie rien ; il ne fonctionne donc que sur le projet d&apos;exemple de la visite.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/provider_choice.py" line="41"/>
        <source>No model set up</source>
        <translation>Aucun modèle configuré</translation>
    </message>
</context>
<context>
    <name>ScoreParts</name>
    <message>
        <location filename="../desktop/ui/labels.py" line="107"/>
        <source>Keyword match</source>
        <translation>Mots-clés</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="108"/>
        <source>Meaning match</source>
        <translation>Sens</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="109"/>
        <source>Code graph proximity</source>
        <translation>Proximité dans le graphe du code</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="110"/>
        <source>Confidence</source>
        <translation>Confiance</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="111"/>
        <source>Recency</source>
        <translation>Fraîcheur</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="112"/>
        <source>Source trust</source>
        <translation>Fiabilité de la source</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="113"/>
        <source>Pinned</source>
        <translation>Épinglée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="114"/>
        <source>Past use</source>
        <translation>Usage passé</translation>
    </message>
</context>
<context>
    <name>SessionSummary</name>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="96"/>
        <location filename="../desktop/ui/dialogs/summary.py" line="105"/>
        <source>Session complete</source>
        <translation>Session terminée</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="106"/>
        <source>What the agent remembered</source>
        <translation>Ce dont l’agent s’est souvenu</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="108"/>
        <source>No memory was used.</source>
        <translation>Aucune mémoire n’a été utilisée.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="114"/>
        <source>Flag</source>
        <translation>Signaler</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="115"/>
        <source>This memory was wrong — correct it</source>
        <translation>Cette mémoire était fausse — la corriger</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/dialogs/summary.py" line="120"/>
        <source>What the agent learned (%n new memories)</source>
        <translation>
            <numerusform>Ce que l’agent a appris (%n nouvelle mémoire)</numerusform>
            <numerusform>Ce que l’agent a appris (%n nouvelles mémoires)</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/dialogs/summary.py" line="122"/>
        <source>New memories that need your review (%n)</source>
        <translation>
            <numerusform>Nouvelle mémoire à revoir (%n)</numerusform>
            <numerusform>Nouvelles mémoires à revoir (%n)</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="133"/>
        <source>&amp;Save all confirmed</source>
        <translation>&amp;Tout enregistrer comme confirmé</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="135"/>
        <source>Keep every new memory you did not forget, as confirmed</source>
        <translation>Garder comme confirmées toutes les nouvelles mémoires que vous n’avez pas oubliées</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="137"/>
        <source>&amp;Review later</source>
        <translation>&amp;Revoir plus tard</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="139"/>
        <source>Apply what you decided; the rest waits in “Needs review”</source>
        <translation>Appliquer vos décisions ; le reste attend dans « À revoir »</translation>
    </message>
</context>
<context>
    <name>SessionView</name>
    <message>
        <source>Which model runs the agent (set it up in Settings).</source>
        <translation type="vanished">Le modèle qui fait tourner l&apos;agent (à configurer dans les Réglages).</translation>
    </message>
    <message>
        <source>Guided tour agent (sample project only)</source>
        <translation type="vanished">Agent de la visite guidée (projet d&apos;exemple uniquement)</translation>
    </message>
    <message>
        <source>Ollama (local)</source>
        <translation type="vanished">Ollama (local)</translation>
    </message>
    <message>
        <source>OpenAI-compatible</source>
        <translation type="vanished">Compatible OpenAI</translation>
    </message>
    <message>
        <source>Anthropic</source>
        <translation type="vanished">Anthropic</translation>
    </message>
    <message>
        <source>The scripted tour agent changes nothing, so it runs only on the tour&apos;s sample project.</source>
        <translation type="vanished">L&apos;agent scripté de la visite ne modifie rien ; il ne fonctionne donc que sur le projet d&apos;exemple de la visite.</translation>
    </message>
    <message>
        <source>Needs the agent runtime and a configured model (Settings).</source>
        <translation type="vanished">Nécessite le moteur d’agents et un modèle configuré (Réglages).</translation>
    </message>
    <message>
        <source>No model set up</source>
        <translation type="vanished">Aucun modèle configuré</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="112"/>
        <source>&amp;Start</source>
        <translation>&amp;Démarrer</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="114"/>
        <location filename="../desktop/ui/session/view.py" line="327"/>
        <source>Run the agent on the task (Ctrl+Enter)</source>
        <translation>Lancer l’agent sur la tâche (Ctrl+Entrée)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="115"/>
        <source>S&amp;top</source>
        <translation>&amp;Arrêter</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="117"/>
        <source>Stop the agent after its current step</source>
        <translation>Arrêter l’agent après son étape en cours</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="119"/>
        <source>Ready</source>
        <translation>Prêt</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="121"/>
        <source>&amp;Provider:</source>
        <translation>&amp;Fournisseur :</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="145"/>
        <source>Right-click a file to teach Engram something about it</source>
        <translation>Clic droit sur un fichier pour apprendre quelque chose à Engram à son sujet</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="155"/>
        <source>The agent&apos;s answer streams here. Memories it cites appear as chips you can flag.</source>
        <translation>La réponse de l’agent s’affiche ici au fil de l’eau. Les mémoires citées apparaissent en pastilles que vous pouvez signaler.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="162"/>
        <source>Tool calls</source>
        <translation>Appels d’outils</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="164"/>
        <source>Tools the agent called; unfold one to see its arguments and result</source>
        <translation>Outils appelés par l’agent ; dépliez-en un pour voir ses arguments et son résultat</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="175"/>
        <source>Sounds like a correction. Create a correction memory?</source>
        <translation>Cela ressemble à une correction. Créer une mémoire de correction ?</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="176"/>
        <source>Create &amp;correction…</source>
        <translation>Créer une &amp;correction…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="177"/>
        <source>Dismiss</source>
        <translation>Ignorer</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="192"/>
        <source>Describe a task, then Ctrl+Enter. “/remember TEXT” teaches a memory right away.</source>
        <translation>Décrivez une tâche, puis Ctrl+Entrée. « /remember TEXTE » enregistre aussitôt une mémoire.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="199"/>
        <source>Try a task such as “%1”, then Ctrl+Enter.</source>
        <translation>Essayez une tâche comme « %1 », puis Ctrl+Entrée.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="167"/>
        <source>Guided tour: press Start to run the suggested task. The tour&apos;s agent reads the sample project&apos;s memories and cites them as chips: click a chip to open the memory, flag it if it is wrong. It changes no file.</source>
        <translation>Visite guidée : appuyez sur Démarrer pour lancer la tâche proposée. L’agent de la visite lit les mémoires du projet d’exemple et les cite sous forme de pastilles : cliquez sur une pastille pour ouvrir la mémoire, signalez-la si elle est fausse. Il ne modifie aucun fichier.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="233"/>
        <location filename="../desktop/ui/session/view.py" line="328"/>
        <source>Set up a model in Settings first</source>
        <translation>Configurez d’abord un modèle dans les Paramètres</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="250"/>
        <source>You</source>
        <translation>Vous</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="268"/>
        <source>Recalling memories…</source>
        <translation>Rappel des mémoires…</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/session/view.py" line="273"/>
        <source>%n memories given to the agent</source>
        <translation>
            <numerusform>%n mémoire donnée à l’agent</numerusform>
            <numerusform>%n mémoires données à l’agent</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="275"/>
        <source>Called %1</source>
        <translation>Appel de %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="286"/>
        <source>The session failed:</source>
        <translation>La session a échoué :</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="292"/>
        <source>Stopped</source>
        <translation>Arrêté</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="293"/>
        <source>Finished</source>
        <translation>Terminé</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="293"/>
        <source>Failed</source>
        <translation>Échec</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="335"/>
        <source>Running…</source>
        <translation>En cours…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="345"/>
        <source>Teach Engram this…</source>
        <translation>Apprendre ceci à Engram…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="364"/>
        <source>Teach Engram about %1…</source>
        <translation>Apprendre à Engram à propos de %1…</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="42"/>
        <source>None (memory still works, without answers)</source>
        <translation>Aucun (la mémoire fonctionne, sans réponses rédigées)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="43"/>
        <source>Ollama (local)</source>
        <translation>Ollama (local)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="44"/>
        <location filename="../desktop/ui/dialogs/settings.py" line="55"/>
        <source>OpenAI-compatible</source>
        <translation>Compatible OpenAI</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="45"/>
        <source>Anthropic</source>
        <translation>Anthropic</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="47"/>
        <source>The agent model above, when one is set</source>
        <extracomment>What writes memories from each finished session besides the rules (Settings.memory_model).</extracomment>
        <translation>Le modèle de l&apos;agent ci-dessus, s&apos;il y en a un</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="48"/>
        <source>Rules only (no model, nothing spent)</source>
        <translation>Règles seules (aucun modèle, rien de dépensé)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="49"/>
        <source>Claude Code (claude -p, your account)</source>
        <translation>Claude Code (claude -p, votre compte)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="50"/>
        <source>Codex (codex exec, your account)</source>
        <translation>Codex (codex exec, votre compte)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="51"/>
        <source>Gemini CLI (gemini -p, your account)</source>
        <translation>Gemini CLI (gemini -p, votre compte)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="52"/>
        <source>Automatic (best available)</source>
        <translation>Automatique (le meilleur disponible)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="53"/>
        <source>Bundled MiniLM (offline)</source>
        <translation>MiniLM intégré (hors ligne)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="54"/>
        <source>Ollama</source>
        <translation>Ollama</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="56"/>
        <source>Follow the system</source>
        <translation>Suivre le système</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="59"/>
        <source>JSON (everything, re-importable)</source>
        <translation>JSON (tout, réimportable)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="60"/>
        <source>Markdown</source>
        <translation>Markdown</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="62"/>
        <source>DELETE</source>
        <translation>SUPPRIMER</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="81"/>
        <source>Settings</source>
        <translation>Réglages</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="84"/>
        <source>&amp;Models</source>
        <translation>&amp;Modèles</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="85"/>
        <source>&amp;Data</source>
        <translation>&amp;Données</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="86"/>
        <location filename="../desktop/ui/dialogs/settings.py" line="278"/>
        <source>&amp;Language</source>
        <translation>&amp;Langue</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="92"/>
        <source>&amp;Trust &amp;&amp; control</source>
        <translation>&amp;Confiance &amp;&amp; contrôle</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="94"/>
        <source>T&amp;eam</source>
        <translation>É&amp;quipe</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="96"/>
        <source>Agent &amp;hooks</source>
        <translation>&amp;Hooks des agents</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="119"/>
        <source>e.g. qwen3:8b, gpt-4.1-mini, claude-sonnet-4</source>
        <translation>p. ex. qwen3:8b, gpt-4.1-mini, claude-sonnet-4</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="122"/>
        <source>empty = the provider&apos;s default</source>
        <translation>vide = le choix par défaut du fournisseur</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="129"/>
        <source>Paste an API key</source>
        <translation>Collez une clé d’API</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="130"/>
        <source>Save in the system &amp;keyring</source>
        <translation>Enregistrer dans le &amp;trousseau du système</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="132"/>
        <source>Keys are kept by the operating system, never in Engram&apos;s files</source>
        <translation>Les clés sont gardées par le système d’exploitation, jamais dans les fichiers d’Engram</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="134"/>
        <source>Checking the system keyring…</source>
        <translation>Vérification du trousseau du système…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="141"/>
        <source>&amp;Agent model provider</source>
        <translation>&amp;Fournisseur du modèle d’agent</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="142"/>
        <source>Agent &amp;model</source>
        <translation>&amp;Modèle d’agent</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="143"/>
        <source>&amp;Embeddings</source>
        <translation>&amp;Plongements</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="144"/>
        <source>Embedding mo&amp;del</source>
        <translation>Mo&amp;dèle de plongement</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="145"/>
        <source>Ollama &amp;address</source>
        <translation>&amp;Adresse d’Ollama</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="146"/>
        <source>OpenAI-compatible &amp;URL</source>
        <translation>&amp;URL compatible OpenAI</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="147"/>
        <source>API &amp;key</source>
        <translation>&amp;Clé d’API</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="157"/>
        <source>Memory &amp;learning model</source>
        <translation>Modèle d&apos;&amp;apprentissage de la mémoire</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="165"/>
        <source>Only the rules learn from your sessions: no request is sent, nothing is spent.</source>
        <translation>Seules les règles apprennent de vos sessions : aucune requête n&apos;est envoyée, rien n&apos;est dépensé.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="167"/>
        <source>Uses the agent model above when one is set (one request per finished session); with none, only the rules learn and nothing is spent.</source>
        <translation>Utilise le modèle de l&apos;agent ci-dessus s&apos;il y en a un (une requête par session terminée) ; sinon, seules les règles apprennent et rien n&apos;est dépensé.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="170"/>
        <source>After each finished session, one request of at most %1 tokens goes to %2 through your own account (subscription or API key), plus one every 10 sessions to merge what they found. Every memory it writes is checked against the session and waits for your review.</source>
        <translation>Après chaque session terminée, une requête d&apos;au plus %1 jetons part vers %2 par votre propre compte (abonnement ou clé d&apos;API), plus une toutes les 10 sessions pour fusionner ce qu&apos;elles ont trouvé. Chaque mémoire écrite est vérifiée par rapport à la session et attend votre relecture.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="183"/>
        <source>Keys are stored in the system keyring.</source>
        <translation>Les clés sont stockées dans le trousseau du système.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="184"/>
        <source>No secure keyring was found on this system, so Engram will not store API keys. Set them in the environment instead (e.g. OPENAI_API_KEY).</source>
        <translation>Aucun trousseau sécurisé n’a été trouvé sur ce système : Engram n’enregistrera donc pas de clés d’API. Définissez-les plutôt dans l’environnement (p. ex. OPENAI_API_KEY).</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="194"/>
        <source>Choose where Engram keeps its data</source>
        <translation>Choisir où Engram garde ses données</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="201"/>
        <source>Data folder not changed</source>
        <translation>Dossier de données inchangé</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="203"/>
        <source>Data folder changed</source>
        <translation>Dossier de données modifié</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="204"/>
        <source>Engram will keep its data in %1 from its next start.</source>
        <translation>Engram gardera ses données dans %1 à partir de son prochain démarrage.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="210"/>
        <source>Memory is stored on this computer in:</source>
        <translation>La mémoire est stockée sur cet ordinateur dans :</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="212"/>
        <source>&amp;Open the data folder</source>
        <translation>&amp;Ouvrir le dossier de données</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="214"/>
        <source>To keep the data elsewhere (a portable drive, a synced folder), choose another folder: Engram uses it from its next start. Projects already stored stay where they are; export and import them to move their memories.</source>
        <translation>Pour garder les données ailleurs (un disque portable, un dossier synchronisé), choisissez un autre dossier : Engram l&apos;utilise dès son prochain démarrage. Les projets déjà enregistrés restent où ils sont ; exportez-les puis importez-les pour déplacer leurs mémoires.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="218"/>
        <source>&amp;Change the data folder…</source>
        <translation>&amp;Changer le dossier de données…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="222"/>
        <source>&amp;Export…</source>
        <translation>&amp;Exporter…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="225"/>
        <source>&amp;Import…</source>
        <translation>&amp;Importer…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="227"/>
        <source>JSON, JSON Lines, Markdown, CLAUDE.md, AGENTS.md or .cursorrules</source>
        <translation>JSON, JSON Lines, Markdown, CLAUDE.md, AGENTS.md ou .cursorrules</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="234"/>
        <source>Delete &amp;everything in this project…</source>
        <translation>&amp;Tout supprimer dans ce projet…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="236"/>
        <source>Removes every memory for good and scrubs the database file</source>
        <translation>Supprime définitivement toutes les mémoires et nettoie le fichier de la base</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="241"/>
        <source>Export and import</source>
        <translation>Export et import</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="252"/>
        <source>Export memories</source>
        <translation>Exporter les mémoires</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="257"/>
        <source>Import memories</source>
        <translation>Importer des mémoires</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="258"/>
        <source>Memory files (*.json *.jsonl *.md *.mdc *.cursorrules);;All files (*)</source>
        <translation>Fichiers de mémoire (*.json *.jsonl *.md *.mdc *.cursorrules);;Tous les fichiers (*)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="266"/>
        <source>Delete everything</source>
        <translation>Tout supprimer</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="267"/>
        <source>Every memory of this project will be deleted for good. Type %1 to confirm.</source>
        <translation>Toutes les mémoires de ce projet seront supprimées définitivement. Tapez %1 pour confirmer.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="276"/>
        <source>Menus and panels switch at once; a few texts follow after a restart.</source>
        <translation>Les menus et panneaux changent aussitôt ; quelques textes suivent après un redémarrage.</translation>
    </message>
</context>
<context>
    <name>TeamPanel</name>
    <message>
        <location filename="../desktop/ui/dialogs/team.py" line="48"/>
        <source>Reading the team settings…</source>
        <translation>Lecture des réglages d&apos;équipe…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/team.py" line="54"/>
        <source>postgresql://team-role:password@host/database?sslmode=verify-full</source>
        <translation>postgresql://role-equipe:mot-de-passe@hote/base?sslmode=verify-full</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/team.py" line="57"/>
        <source>How teammates see you</source>
        <translation>Comment vos coéquipiers vous voient</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/team.py" line="58"/>
        <source>&amp;Test</source>
        <translation>&amp;Tester</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/team.py" line="61"/>
        <source>&amp;Connect</source>
        <translation>&amp;Connecter</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/team.py" line="65"/>
        <source>&amp;Leave the team</source>
        <translation>&amp;Quitter l&apos;équipe</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/team.py" line="67"/>
        <source>Stops syncing; the memories on this computer are kept</source>
        <translation>Arrête la synchronisation ; les mémoires de cet ordinateur sont conservées</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/team.py" line="77"/>
        <source>Server &amp;URL</source>
        <translation>&amp;URL du serveur</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/team.py" line="78"/>
        <source>Your &amp;name</source>
        <translation>Votre &amp;nom</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/team.py" line="79"/>
        <source>Shared with the team</source>
        <translation>Partagé avec l&apos;équipe</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/team.py" line="89"/>
        <source>Personal memories never leave this computer. Secrets are redacted before anything is sent. One memory can be shared or kept personal with the Team button of the memory browser.</source>
        <translation>Les mémoires personnelles ne quittent jamais cet ordinateur. Les secrets sont masqués avant tout envoi. Une mémoire peut être partagée ou gardée personnelle avec le bouton Équipe du navigateur de mémoires.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/team.py" line="107"/>
        <source>Connected to team %1 on %2 as %3.</source>
        <translation>Connecté à l&apos;équipe %1 sur %2 en tant que %3.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/team.py" line="110"/>
        <source>Not connected to a team. Paste the join URL your team admin gave you.</source>
        <translation>Non connecté à une équipe. Collez l&apos;URL d&apos;adhésion fournie par l&apos;administrateur de l&apos;équipe.</translation>
    </message>
</context>
<context>
    <name>Trust</name>
    <message>
        <location filename="../desktop/ui/trust.py" line="31"/>
        <source>Cautious</source>
        <translation>Prudent</translation>
    </message>
    <message>
        <location filename="../desktop/ui/trust.py" line="31"/>
        <source>Only memories above 0.80 confidence reach the agent. Every new memory waits for your confirmation at the end of the session.</source>
        <translation>Seules les mémoires de confiance supérieure à 0,80 parviennent à l’agent. Chaque nouvelle mémoire attend votre confirmation en fin de session.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/trust.py" line="34"/>
        <source>Standard</source>
        <translation>Standard</translation>
    </message>
    <message>
        <location filename="../desktop/ui/trust.py" line="34"/>
        <source>Memories above 0.65 reach the agent, and gotchas are offered while it works. The session summary proposes “Confirm all”.</source>
        <translation>Les mémoires au-dessus de 0,65 parviennent à l’agent, et les pièges lui sont signalés pendant son travail. Le résumé de session propose « Tout confirmer ».</translation>
    </message>
    <message>
        <location filename="../desktop/ui/trust.py" line="37"/>
        <source>Confident</source>
        <translation>Confiant</translation>
    </message>
    <message>
        <location filename="../desktop/ui/trust.py" line="37"/>
        <source>Memories above 0.55 reach the agent. The session summary only shows memories that need review.</source>
        <translation>Les mémoires au-dessus de 0,55 parviennent à l’agent. Le résumé de session ne montre que les mémoires à revoir.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/trust.py" line="40"/>
        <source>Autonomous</source>
        <translation>Autonome</translation>
    </message>
    <message>
        <location filename="../desktop/ui/trust.py" line="40"/>
        <source>Memories above 0.45 reach the agent. The session summary is not shown unless you open it from the memory panel.</source>
        <translation>Les mémoires au-dessus de 0,45 parviennent à l’agent. Le résumé de session n’apparaît que si vous l’ouvrez depuis le panneau mémoire.</translation>
    </message>
</context>
<context>
    <name>TrustPanel</name>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="30"/>
        <source>Off — agents neither read nor write memory</source>
        <translation>Désactivée — les agents ne lisent ni n’écrivent la mémoire</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="31"/>
        <source>Read-only — agents use memory but never add to it</source>
        <translation>Lecture seule — les agents utilisent la mémoire sans jamais l’enrichir</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="32"/>
        <source>Confirm each — new memories wait for your OK</source>
        <translation>Confirmer chaque ajout — les nouvelles mémoires attendent votre accord</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="33"/>
        <source>Automatic — saved at once, quarantined until reviewed</source>
        <translation>Automatique — enregistrées aussitôt, en quarantaine jusqu’à la revue</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="36"/>
        <source>Conservative — promote only strong, repeated signals</source>
        <translation>Prudent — ne promouvoir que les signaux forts et répétés</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="37"/>
        <source>Balanced — the default thresholds</source>
        <translation>Équilibré — les seuils par défaut</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="38"/>
        <source>Eager — promote more, review more</source>
        <translation>Généreux — promouvoir plus, revoir plus</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="50"/>
        <source>Trust level</source>
        <translation>Niveau de confiance</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="73"/>
        <source>Let Engram learn from sessions automatically (auto-memory)</source>
        <translation>Laisser Engram apprendre automatiquement des sessions (mémoire automatique)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="75"/>
        <source>When off, only what you teach is remembered</source>
        <translation>Désactivée, seul ce que vous enseignez est retenu</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="81"/>
        <source>&amp;Write policy</source>
        <translation>&amp;Politique d’écriture</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="83"/>
        <source>&amp;Promotion</source>
        <translation>P&amp;romotion</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="112"/>
        <source>To reach Standard: 3 sessions (%1 so far) and half of the new memories confirmed (%2% so far).</source>
        <translation>Pour passer à Standard : 3 sessions (%1 jusqu’ici) et la moitié des nouvelles mémoires confirmées (%2 % jusqu’ici).</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="116"/>
        <source>To reach Confident: 10 sessions (%1 so far), under 5% corrected (%2%) and at least one correction made.</source>
        <translation>Pour passer à Confiant : 10 sessions (%1 jusqu’ici), moins de 5 % de corrections (%2 %) et au moins une correction faite.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="120"/>
        <source>Higher levels are only ever chosen by you.</source>
        <translation>Les niveaux supérieurs ne sont jamais choisis que par vous.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="122"/>
        <source>This project has earned the next level. Choose it above when you are ready.</source>
        <translation>Ce projet a gagné le niveau suivant. Choisissez-le ci-dessus quand vous serez prêt.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="128"/>
        <source>Raise the trust level?</source>
        <translation>Relever le niveau de confiance ?</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="129"/>
        <source>At %1, agents receive memories down to %2 confidence and you see less of the session summary. You can go back at any time. Continue?</source>
        <translation>Au niveau %1, les agents reçoivent des mémoires jusqu’à une confiance de %2 et vous voyez moins le résumé de session. Vous pouvez revenir en arrière à tout moment. Continuer ?</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="150"/>
        <source>Step back to a more careful level?</source>
        <translation>Revenir à un niveau plus prudent ?</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="151"/>
        <source>You flagged %1 memories as wrong in this session. Move this project from %2 to %3, so agents get only surer memories? Nothing changes unless you agree.</source>
        <translation>Vous avez signalé %1 mémoires comme fausses pendant cette session. Passer ce projet de %2 à %3, pour que les agents ne reçoivent que des mémoires plus sûres ? Rien ne change sans votre accord.</translation>
    </message>
</context>
<context>
    <name>WelcomePage</name>
    <message>
        <location filename="../desktop/ui/welcome.py" line="25"/>
        <source>Long-term memory of your codebase for AI coding agents.
Open a project folder to start.</source>
        <translation>La mémoire à long terme de votre code pour les agents de code IA.
Ouvrez un dossier de projet pour commencer.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/welcome.py" line="28"/>
        <source>&amp;Open a project folder…</source>
        <translation>&amp;Ouvrir un dossier de projet…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/welcome.py" line="33"/>
        <source>Double-click to open; right-click or Delete to remove from this list</source>
        <translation>Double-cliquez pour ouvrir ; clic droit ou Suppr pour retirer de cette liste</translation>
    </message>
    <message>
        <location filename="../desktop/ui/welcome.py" line="37"/>
        <source>&amp;Remove from Recent Projects</source>
        <translation>&amp;Retirer des projets récents</translation>
    </message>
    <message>
        <location filename="../desktop/ui/welcome.py" line="48"/>
        <source>Recent projects</source>
        <translation>Projets récents</translation>
    </message>
</context>
<context>
    <name>WindowMenus</name>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="47"/>
        <source>&amp;File</source>
        <translation>&amp;Fichier</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="48"/>
        <source>&amp;Open Project…</source>
        <translation>&amp;Ouvrir un projet…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="50"/>
        <source>Open &amp;Recent</source>
        <translation>Projets &amp;récents</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="52"/>
        <source>&amp;Settings…</source>
        <translation>&amp;Réglages…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="55"/>
        <source>&amp;Quit</source>
        <translation>&amp;Quitter</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="56"/>
        <source>&amp;Project</source>
        <translation>&amp;Projet</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="57"/>
        <source>&amp;Teach Engram…</source>
        <translation>&amp;Apprendre à Engram…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="58"/>
        <source>Write down something agents should know</source>
        <translation>Noter quelque chose que les agents doivent savoir</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="59"/>
        <source>&amp;Review Memories…</source>
        <translation>&amp;Revoir les mémoires…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="61"/>
        <source>Confirm or forget memories that wait for review</source>
        <translation>Confirmer ou oublier les mémoires en attente de revue</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="62"/>
        <source>Resolve &amp;Conflicts…</source>
        <translation>Résoudre les &amp;conflits…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="63"/>
        <source>Decide between memories that disagree</source>
        <translation>Trancher entre des mémoires qui se contredisent</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="64"/>
        <source>&amp;Get to Know This Project…</source>
        <translation>&amp;Découvrir ce projet…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="66"/>
        <source>Index the code and import agent rule files</source>
        <translation>Indexer le code et importer les fichiers de règles des agents</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="69"/>
        <source>&amp;View</source>
        <translation>&amp;Affichage</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="70"/>
        <source>&amp;Memory Panel</source>
        <translation>Panneau &amp;mémoire</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="72"/>
        <source>Show or hide the memory panel (%1)</source>
        <translation>Afficher ou masquer le panneau mémoire (%1)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="79"/>
        <source>Last Session &amp;Summary…</source>
        <translation>&amp;Résumé de la dernière session…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="80"/>
        <source>&amp;Help</source>
        <translation>&amp;Aide</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="81"/>
        <source>Guided &amp;Tour (Sample Project)</source>
        <translation>&amp;Visite guidée (projet d&apos;exemple)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="82"/>
        <source>Open a sample project Engram creates, with a scripted agent; your projects are not touched</source>
        <translation>Ouvrir un projet d&apos;exemple créé par Engram, avec un agent scripté ; vos projets ne sont pas modifiés</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="85"/>
        <source>&amp;About Engram</source>
        <translation>À &amp;propos d’Engram</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="86"/>
        <source>Engram %1
Long-term memory for AI coding agents.</source>
        <translation>Engram %1
Mémoire à long terme pour les agents de code IA.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="92"/>
        <source>Switch project</source>
        <translation>Changer de projet</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="97"/>
        <source>Settings</source>
        <translation>Réglages</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="98"/>
        <source>Models, keys, data, language, trust</source>
        <translation>Modèles, clés, données, langue, confiance</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="117"/>
        <source>Guided tour (sample project)</source>
        <translation>Visite guidée (projet d’exemple)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="127"/>
        <source>No project open</source>
        <translation>Aucun projet ouvert</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="129"/>
        <source>Open another folder…</source>
        <translation>Ouvrir un autre dossier…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="146"/>
        <source>Memory</source>
        <translation>Mémoire</translation>
    </message>
</context>
</TS>
