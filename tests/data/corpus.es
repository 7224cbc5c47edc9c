Aceptando Garantía o Responsabilidad Adicional.
Ver la Licencia para la lengua concreta que rige permisos y limitaciones bajo la Licencia.
Puedes aplicar el bug fija, la portabilidad fija y otras modificaciones derivaron del Dominio público o del Titular de Copyright.
Puedes cobrar un razonable copiando coste para cualquier distribución de este Envase.
Puedes cobrar cualquier coste escoges para apoyo de este Envase.
No puedes cobrar un coste para este Envase él.
Copyright (c) El Regents de la Universidad de California.
Redistribución y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
Tampoco el nombre del Universitario ni los nombres de sus colaboradores pueden soler endosar o promover los productos derivaron de este software sin permiso escrito previo concreto.
La Licencia será considerada eficaz como de la cita CC0 estuvo aplicado por Affirmer a la Obra.
Affirmer Entiende y reconoce que Creativo Commons no es una fiesta a este documento y tiene ningún deber u obligación con respetar a este CC0 o uso de la Obra.
Secondarily, estas coto de Licencia para el autor y editor una manera de coger crédito para su obra, mientras no siendo considerado responsable para las modificaciones hicieron por otros.
Complementa el GNU Licencia Pública General, el cual es un copyleft la licencia diseñada para software libre.
Pero esta Licencia no es limitada a manuales de software; puede ser utilizado para cualquier obra textual, a toda costa de asunto subject o si está publicado como libro imprimido.
Tal aviso concede un mundial, realeza-licencia libre, unlimited en duración, para utilizar aquella obra bajo las afecciones declaró herein.
Aceptas la licencia si copias, modifica o distribuir la obra en una manera que requiere permiso debajo ley de copyright.
Si una sección no cabe el encima definición de Secundario entonces no es dejado para ser designado como Invariable.
El Documento puede contener cero Secciones Invariables.
Si el Documento no identifica cualesquier Secciones Invariables entonces allí son ninguno.
Un Frente-Texto de Portada puede ser como máximo 5 palabras, y un Atrás-Texto de Portada puede ser como máximo 25 palabras.
Una copia hecha en un otherwise formato de lima Transparente cuyo markup, o ausencia de markup, ha sido arreglado a thwart o desalentar modificación subsiguiente por los lectores no es Transparentes.
Un formato de imagen no es Transparente si utilizado para cualquier cantidad sustancial de texto.
Los ejemplos de formatos de imagen transparente incluyen PNG, XCF y JPG.
El Documento puede incluir Descargos de responsabilidad de Garantía luego al notar cuál declara que esta Licencia aplica al Documento.
No puedes utilizar medidas técnicas para obstruir o controlar la lectura o más allá copiando de las copias haces o distribuir.
Aun así, puedes aceptar compensación en cambio para copias.
Si distribuyes un grande bastante número de copias también tienes que seguir las afecciones en sección 3.
Ambas portadas tienen que también claramente y legibly identificarte como el editor de estas copias.
La portada de frente tiene que presentar el título lleno con todas las palabras del título igualmente prominente y visible.
Puedes añadir otro material en las portadas además.
Copiando con los cambios limitaron a las portadas, mientras preservan el título del Documento y satisfacer estas afecciones, puede ser tratado tan verbatim copiando en otros aspectos.
Además, tienes que hacer estas cosas en la Versión Modificada: Un.
Puedes utilizar el mismo título como versión anterior si el editor original de aquella versión da permiso.
Estatal en la página de Título el nombre del editor de la Versión Modificada, como el editor.
Coto todos los avisos de copyright del Documento.
Añadir un aviso de copyright apropiado para vuestras modificaciones adyacentes a los otros avisos de copyright.
La coto en aquella licencia nota las listas llenas de Secciones Invariables y Textos de Portada requerida dados en el aviso de licencia del Documento.
Incluir un unaltered copia de esta Licencia.
Coto todas las Secciones Invariables del Documento, unaltered en su texto y en sus títulos.
Números de sección o el equivalente no son parte considerada de los títulos de sección.
Tal sección no puede ser incluida en la Versión Modificada.
Para hacer este, añadir sus títulos a la lista de Secciones Invariables en el aviso de licencia de la Versión Modificada.
Estos títulos tienen que ser distintos de cualesquier otros títulos de sección.
Sólo un pasaje de Frente-Texto de Portada y uno de TextodePortada Posterior puede ser añadido por (o a través de los arreglos hicieron por) cualquiera entidad.
La necesidad de obra combinada sólo contiene uno copia de esta Licencia, y Secciones Invariables idénticas múltiples puede ser reemplazado con una copia sola.
Marca el mismo ajustamiento a los títulos de sección en la lista de Secciones Invariables en el aviso de licencia de la obra combinada.
Cuándo el Documento está incluido en un conjunto, esta Licencia no aplica a las otras obras en el agregar cuáles no se son obras derivadas del Documento.
En caso de un desacuerdo entre la traducción y la versión original de esta Licencia o un aviso o descargo de responsabilidad, la versión original prevalecerá.
Cualquier intento otherwise para copiar, modifica, sublicense, o distribuir es void, y automáticamente rescindirá vuestros derechos bajo esta Licencia.
Terminación de vuestros derechos bajo esta sección no rescinde las licencias de fiestas quiénes han recibido copia o derechos de ti debajo esta Licencia.
Tales versiones nuevas serán similares en alcohol a la versión presente, pero puede diferir en detalle para dirigir preocupaciones o problemas nuevos.
Cada versión de la Licencia está dada una versión de distinguir número.
Si el Documento no especifica un número de versión de esta Licencia, puedes escoger cualquier versión nunca publicada (no como borrador) por la Fundación de Software Libre.
Un público wiki que cualquiera puede editar es un ejemplo de tal servidor.
Si tienes Secciones Invariables sin Textos de Portada, o algunos otra combinación del tres, fusionar aquellas dos alternativas para adaptar la situación.
Cualquiera otro intento de copiar, modifica, sublicense o distribuir el Documento es void, y automáticamente rescindirá vuestros derechos bajo esta Licencia.
Preámbulo El GNU la licencia Pública General es un libre, copyleft licencia para software y otras clases de obras.
Las licencias para la mayoría de software y otras obras prácticas están diseñados para tomar fuera vuestra libertad para compartir y cambiar las obras.
Nosotros, la Fundación de Software Libre, uso el GNU Licencia Pública General para la mayoría de nuestro software; aplica también a cualquier otra obra liberó de este modo por sus autores.
Lo puedes aplicar a vuestros programas, también.
Cuándo hablamos de software libre, estamos refiriendo a libertad, no tasar.
Para proteger vuestros derechos, necesitamos impedir otros de negarte estos derechos o pidiéndote para rendirse los derechos.
Por tanto, tienes responsabilidades seguras si distribuyes copias del software, o si lo modificas: responsabilidades de respetar la libertad de otros.
Por ejemplo, si distribuyes copias de tal programa, si gratis o para un coste, tienes que pasar encima al recipients las mismas libertades que te recibió.
Tienes que hacer seguro que ellos, también, recibe o puede coger el código de fuente.
Y les tienes que asomar estos denomina tan saben sus derechos.
Para los desarrolladores' y autores' protección, el GPL claramente explica que no hay ninguna garantía para este software libre.
Para ambos usuarios' y autores' sake, el GPL requiere aquello modificó versiones ser marcados tan cambiados, de modo que sus problemas no serán atribuidos erroneously a autores de versiones anteriores.
Algunos aparatos están diseñados para negar acceso de usuarios para instalar o la carrera modificó versiones del software dentro les, a pesar de que el fabricante puede hacer tan.
Esto es fundamentalmente incompatible con el objetivo de proteger usuarios' libertad para cambiar el software.
El patrón sistemático de tal abuso ocurre en el área de productos para personaje para utilizar, el cual es precisamente dónde es más inaceptable.
Por tanto, hemos diseñado esta versión del GPL para prohibir la práctica para aquellos productos.
Finalmente, cada programa está acechado constantemente por patentes de software.
Para impedir esto, el GPL asegura que las patentes no pueden soler render el programa no-libre.
Los plazos precisos y afecciones para copiar, la distribución y la modificación siguen.
La propagación incluye copiar, distribución (con o sin modificación), haciendo disponible al público, y en algunos países otras actividades también.
Interacción mera con un usuario a través de una red de ordenador, sin traslado de una copia, no está transmitiendo.
La Fuente Correspondiente necesita no incluir cualquier cosa aquellos usuarios pueden regenerar automáticamente de otras partes de la Fuente Correspondiente.
Todos los derechos concedieron bajo esta Licencia está concedida para el plazo de copyright en el Programa, y es irrevocable proporcionado el declaró las afecciones están cumplidas.
Esta Licencia explícitamente afirma vuestro unlimited permiso para correr el unmodified Programa.
La salida de correr una obra cubierta está cubierta por esta Licencia sólo si la salida, dado su contenido, constituye una obra cubierta.
Esta Licencia reconoce vuestros derechos de uso justo u otro equivalente, como proporcionado por ley de copyright.
Puedes hacer, corrido y propagar cubierto obra que no transmites, sin afecciones siempre y cuando vuestra licencia otherwise se mantiene en vigor.
Transmitiendo bajo cualesquier otras circunstancias es permitted sólo bajo las afecciones declararon abajo.
Protegiendo Usuarios' Derechos legales De Anti-Circumvention Ley.
Esta Licencia por tanto aplicará, junto con cualquier sección aplicable 7 plazos adicionales, a la totalidad de la obra, y todas sus partes, a toda costa de cómo son packaged.
Necesitas no requerir recipients para copiar la Fuente Correspondiente junto con el código de objeto.
Un separable porción del código de objeto, cuyo código de fuente está excluido de la Fuente Correspondiente como Biblioteca de Sistema, necesita no ser incluido en transmitir la obra de código del objeto.
En determinar si un producto es un producto de consumidor , los casos dudosos serán resueltos a favor de cobertura.
La información tiene que bastar para asegurar que el funcionamiento continuado del código de objeto modificado es en ningún caso impedido o interferido con sólo porque la modificación ha sido hecha.
Permisos adicionales que es aplicable al Programa entero será tratado como si estuvieron incluidos en esta Licencia, al alcance que son válidos bajo ley aplicable.
No puedes propagar o modificar una obra cubierta exceptúa tan expressly proporcionado bajo esta Licencia.
La aceptación No Requerida para Habiendo Copias.
No eres requerido para aceptar esta Licencia para recibir o correr una copia del Programa.
Propagación subsidiaria de una obra cubierta que ocurre sólo como consecuencia de utilizar peer-a-peer transmisión para recibir una copia así mismo no requiere aceptación.
Aun así, nada otro que esta Licencia te concedes permiso para propagar o modificar cualquier obra cubierta.
Estas acciones infringe copyright si no aceptas esta Licencia.
Automático Autorizando de Río abajo Recipients.
Cada vez transmites una obra cubierta, el recipient automáticamente recibe una licencia del original licensors, para correr, modifica y propagar aquella obra, tema a esta Licencia.
No eres responsable para aplicar conformidad por terceras fiestas con esta Licencia.
No puedes imponer cualesquier restricciones más lejanas en el ejercicio de los derechos concedidos o afirmados bajo esta Licencia.
Ninguna Rendición de Otros' Libertad.
Uso con el GNU Affero Licencia Pública General.
Versiones revisadas de esta Licencia.
Cada versión está dada una versión de distinguir número.
Si el Programa no especifica un número de versión del GNU Licencia Pública General, puedes escoger cualquier versión nunca publicada por la Fundación de Software Libre.
Versiones de licencia más tardía te pueden dar permisos adicionales o diferentes.
Interpretación de Secciones 15 y 16.
Para hacer tan, adosar los avisos siguientes al programa.
Ver el GNU Licencia Pública General para más detalles.
Tendrías que haber recibido una copia del GNU Licencia Pública General junto con este programa.
También añadir información encima cómo para contactar tú por electrónico y correo de papel.
El GNU la licencia Pública General no permite incorporando vuestro programa a programas propietarios.
Si vuestro programa es una biblioteca de subrutina , lo puedes considerar más útil de permitir enlazando aplicaciones propietarias con la biblioteca.
Si esto es qué quieres hacer, uso el GNU Licencia Pública General Menor en vez de esta Licencia.
Preámbulo Los acuerdos de licencia de la mayoría de empresas de software intentan mantener usuarios en la piedad de aquellas empresas.
Por contraste, nuestra Licencia Pública General está pretendida para garantizar vuestra libertad para compartir y cambiar software libre--para hacer seguro el software es libre para todos sus usuarios.
La Licencia Pública General aplica al software de la Fundación de Software Libre y a cualquier otro programa cuyos autores cometen a utilizarlo.
Puedes utilizar él para vuestros programas, también.
Para proteger vuestros derechos, necesitamos hacer restricciones que prohíbe cualquiera para negarte estos derechos o para pedirte para rendirse los derechos.
Estas restricciones traducen a responsabilidades seguras para ti si distribuyes copias del software, o si lo modificas.
Por ejemplo, si distribuyes copias de un tal programa, si gratis o para un coste, tienes que dar el recipients todos los derechos que tienes.
Y les tienes que decir sus derechos.
También, para la protección de cada autor y el nuestro, queremos hacer seguros que todo el mundo entiende que no hay ninguna garantía para este software libre.
No puedes copiar, modifica, sublicense, distribuye o transferir el Programa exceptúa tan expressly proporcionado bajo esta Licencia Pública General.
Cualquier intento otherwise para copiar, modifica, sublicense, distribuye o transferir el Programa es void, y automáticamente rescindirá vuestros derechos de utilizar el Programa bajo esta Licencia.
Si deseas incorporar partes del Programa a otros programas libres cuyas afecciones de distribución son diferentes, escribe al autor para pedir permiso.
Para software qué es copyrighted por la Fundación de Software Libre, escribe a la Fundación de Software Libre; nosotros a veces excepciones de marca para este.
Preámbulo Las licencias para la mayoría de software están diseñadas para tomar fuera vuestra libertad para compartir y cambiarlo.
Por contraste, el GNU la licencia Pública General está pretendida para garantizar vuestra libertad para compartir y cambiar software libre--para hacer seguro el software es libre para todos sus usuarios.
Por ejemplo, si distribuyes copias de tal programa, si gratis o para un coste, tienes que dar el recipients todos los derechos que tienes.
Finalmente, cualquier programa libre está acechado constantemente por patentes de software.
Deseamos evitar el peligro que redistributors de un programa libre individualmente obtendrá licencias de patente, en efecto haciendo el programa propietario.
Para impedir esto, hemos hecho aclara que cualquier patente tiene que ser autorizada para todo el mundo es uso libre o no autorizado en absoluto.
Actividades otro que copiando, la distribución y la modificación no son cubiertas por esta Licencia; son fuera de su alcance.
No puedes copiar, modifica, sublicense, o distribuir el Programa exceptúa tan expressly proporcionado bajo esta Licencia.
Cualquier intento otherwise para copiar, modifica, sublicense o distribuir el Programa es void, y automáticamente rescindirá vuestros derechos bajo esta Licencia.
No eres requerido para aceptar esta Licencia, desde entonces te no lo ha firmado.
Aun así, nada más te concedes permiso para modificar o distribuir el Programa o sus obras derivadas.
Estas acciones están prohibidas por ley si no aceptas esta Licencia.
No puedes imponer cualesquier restricciones más lejanas en el recipients' el ejercicio de los derechos concedió herein.
Definiendo una subclase de una clase definida por la Biblioteca está considerada un modo de utilizar una interfaz proporcionada por la Biblioteca.
Excepción a Sección 3 del GNU GPL.
Código de objeto que Incorpora Material de Limas de Encabezamiento de la Biblioteca.
La forma de código del objeto de una Aplicación puede incorporar el material de un encabezamiento archiva aquello es parte de la Biblioteca.
Versiones revisadas del GNU Licencia Pública General Menor.
Por contraste, el GNU las licencias Públicas Generales están pretendidas para garantizar vuestra libertad para compartir y cambiar software libre--para hacer seguro el software es libre para todos sus usuarios.
Esta licencia, la Biblioteca Licencia Pública General, aplica a algunos especialmente Fundación de Software Libre designada software, y a cualesquier otras bibliotecas cuyos autores deciden utilizarlo.
Puedes utilizar él para vuestras bibliotecas, también.
Estas restricciones traducen a responsabilidades seguras para ti si distribuyes copias de la biblioteca, o si lo modificas.
Por ejemplo, si distribuyes copias de la biblioteca, si gratis o para un coste, tienes que dar el recipients todos los derechos que te disteis.
También, para la protección de cada distribuidor, queremos hacer seguros que todo el mundo entiende que no hay ninguna garantía para esta biblioteca libre.
Deseamos evitar el peligro que las empresas que distribuyen el software libre individualmente obtendrá licencias de patente, así en efecto transformando el programa a software propietario.
La mayoría de GNU software, incluyendo algunas bibliotecas, está cubierto por el normal GNU Licencia Pública General, el cual estuvo diseñado para programas de utilidad.
Esta licencia, el GNU Biblioteca Licencia Pública General, aplica a seguro designó bibliotecas.
Enlazando un programa con una biblioteca, sin cambiar la biblioteca, es en algún sentido sencillamente utilizando la biblioteca, y es análogo a correr un programa de utilidad o programa de aplicación.
Aun así, en un sentido textual y legal, el enlazado ejecutable es una obra combinada, un derivado de la biblioteca original, y la Licencia Pública General normal lo trata como tal.
Debido a esta distinción borrosa, utilizando la Licencia Pública General normal para las bibliotecas no eficazmente promueven el software que comparte, porque la mayoría de desarrolladores no utilizaron las bibliotecas.
Concluimos que las afecciones más débiles podrían promover compartir mejores.
Aun así, unrestricted enlazando de programasnolibres privarían los usuarios de aquellos programas de todo beneficio del estado libre de las bibliotecas ellos.
El anterior contiene el código derivado de la biblioteca, mientras las obras únicas últimas junto con la biblioteca.
Puedes optar para aplicar los términos del normales GNU Licencia Pública General en vez de esta Licencia a una copia dada de la Biblioteca.
Tal obra, en aislamiento, no es una obra derivada de la Biblioteca, y por eso caídas fuera del alcance de esta Licencia.
El ejecutable es por tanto cubierto por esta Licencia.
Sección 6 plazos de estados para distribución de tal executables.
Si esto es cierto es especialmente significativo si la obra puede ser enlazada sin la Biblioteca, o si la obra se es una biblioteca.
El umbral para este para ser cierto no es precisamente definido por ley.
Tienes que dar aviso prominente con cada copia de la obra que la Biblioteca está utilizada en él y que la Biblioteca y su uso están cubiertos por esta Licencia.
Tienes que suministrar una copia de esta Licencia.
Puede pasar que este requisito contradice las restricciones de licencia de otras bibliotecas propietarias que no normalmente acompañar el sistema operativo.
No puedes copiar, modifica, sublicense, enlace con, o distribuir la Biblioteca exceptúa tan expressly proporcionado bajo esta Licencia.
Cualquier intento otherwise para copiar, modifica, sublicense, enlace con, o distribuir la Biblioteca es void, y automáticamente rescindirá vuestros derechos bajo esta Licencia.
Aun así, nada más te concedes permiso para modificar o distribuir la Biblioteca o sus obras derivadas.
Si deseas incorporar partes de la Biblioteca a otros programas libres cuyas afecciones de distribución son incompatibles con estos, escribe al autor para pedir permiso.
Puedes hacer tan por permitting redistribución bajo estos plazos (o, alternativamente, bajo los plazos de la Licencia Pública General normal).
Para aplicar estos plazos, adosar los avisos siguientes a la biblioteca.
Ver el GNU Biblioteca Licencia Pública General para más detalles.
Esta licencia, la Licencia Pública General Menor, aplica a algunos software designado especialmente envases--típicamente bibliotecas--de la Fundación de Software Libre y otros autores quiénes deciden utilizarlo.
Cuándo hablamos de software libre, estamos refiriendo a libertad de uso, no tasar.
Para proteger vuestros derechos, necesitamos hacer restricciones que prohíbe distribuidores para negarte estos derechos o para pedirte para rendirse estos derechos.
Estas restricciones traducen a responsabilidades seguras para ti si distribuyes copias de la biblioteca o si lo modificas.
Para proteger cada distribuidor, lo queremos hacer muy claros que no hay ninguna garantía para la biblioteca libre.
Deseamos hacer seguro que una empresa puede no eficazmente restringir los usuarios de un programa libre por obtener un restrictive licencia de un titular de patente.
Por tanto, insistimos que cualquier licencia de patente obtenida para una versión de la biblioteca tiene que ser compatible con la libertad llena de utilizar especificado en esta licencia.
La mayoría de GNU software, incluyendo algunas bibliotecas, está cubierto por el normal GNU Licencia Pública General.
Esta licencia, el GNU Licencia Pública General Menor, aplica a seguro designó bibliotecas, y es bastante diferente de la Licencia Pública General normal.
Utilizamos esta licencia para bibliotecas seguras para permite enlazar aquellas bibliotecas a programasnolibres.
La Licencia Pública General normal por tanto permite tal enlazando sólo si la combinación entera cabe sus criterios de libertad.
La Licencia Pública General Menor permite más lax criterios para enlazar otro código con la biblioteca.
También proporciona otros desarrolladores de software libres Menos de una ventaja encima compitiendo programasnolibres.
Estas desventajas son la razón utilizamos la Licencia Pública General normal para muchas bibliotecas.
Aun así, la licencia Menor proporciona ventajas en circunstancias especiales seguras.
Por ejemplo, en ocasiones raras, puede haber una necesidad especial de fomentar el uso posible más ancho de una biblioteca segura, de modo que acaece un de-facto nivel.
Para conseguir esto, programasnolibres tienen que ser dejados para utilizar la biblioteca.
Un caso más frecuente es que una biblioteca libre el mismo trabajo tan ampliamente utilizado bibliotecasnolibres.
En este caso, hay poco para obtener por limitativo la biblioteca libre a software libre sólo, así que utilizamos la Licencia Pública General Menor.
En otros casos, permiso para utilizar una biblioteca particular en programasnolibres habilita un número más sumo de personas para utilizar un ente grande de software libre.
Ver el GNU Licencia Pública General Menor para más detalles.
Cuándo el código Cubierto está liberado como series de limas, una Modificación es: Un.
Cualquier adición a o deletion de los contenidos de una lima que contiene Código Original o Modificaciones anteriores.
No puedes ofrecer o imponer cualesquier plazos en cualquier versión de Código de la Fuente que altera o restringe la versión aplicable de esta Licencia o el recipients' derechos hereunder.
Tienes que causar todo Código Cubierto al cual contribuyes para contener una lima que documenta los cambios hiciste para crear aquel Código Cubierto y la cita de cualquier cambio.
Asuntos de Hacienda intelectual (un) Terceras Reclamaciones de Fiesta.
Tienes que duplicar el aviso en Exhibir Un en cada lima del Código de Fuente.
Si creaste uno o más Modificación(s) puedes añadir vuestro nombre como Colaborador al aviso descrito en Exhibir Un.
También tienes que duplicar esta Licencia en cualquier documentación para el Código de Fuente donde describes recipients' derechos o derechos de propiedad que narran a Código Cubierto.
Puedes escoger ofrecer, y para cobrar un coste para, garantía, apoyo, indemnity u obligaciones de responsabilidad a un o más recipients de Código Cubierto.
Aun así, puedes hacer tan sólo por tu cuenta behalf, y no encima behalf del Desarrollador Inicial o cualquier Colaborador.
El aviso tiene que ser conspicuously incluido en cualquier aviso en una versión Ejecutable, documentación narrada o colateral en qué describes recipients' los derechos que narran al Código Cubierto.
Puedes crear una Obra más Grande por combinar Código Cubierto con otro código no regido por los plazos de esta Licencia y distribuir la Obra más Grande como producto solo.
Incapacidad a Comply Debido a Estatuto o Control.
Código Cubierto una vez ha sido publicado bajo una versión particular de la Licencia, siempre puedes continuar utilizar lo debajo los plazos de aquella versión.
También puedes escoger utilizar tal Código Cubierto bajo los plazos de cualquier versión subsiguiente de la Licencia publicada por Netscape.
Todo sublicenses al Código Cubierto qué es propiamente concedido sobrevivirá cualquier terminación de esta Licencia.
Esta Licencia representa el acuerdo completo respecto de asunto subject hereof.
Si cualquier provisión de esta Licencia está aguantada para ser unenforceable, tal provisión será reformada sólo al alcance necesario de hacerlo enforceable.
Esta Licencia será regida por provisiones de ley de la California (exceptúa al alcance ley aplicable, si cualquiera, proporciona otherwise), excluyendo su conflicto-de-provisiones de ley.
La aplicación de la Convención de Naciones Unidas en Contratos para la Venta Internacional de Bienes es expressly excluyó.
Ver la Licencia para la lengua concreta que rige derechos y limitaciones bajo la Licencia.
Las limitaciones encima Conceden Alcance Las licencias concedieron en esta Sección 2 es los derechos únicos concedieron bajo esta Licencia.
Ningún derecho adicional o las licencias serán implicados de la distribución o autorizando de Software Cubierto bajo esta Licencia.
Aplicación de Plazos Adicionales puedes escoger ofrecer, y para cobrar un coste para, garantía, apoyo, indemnity u obligaciones de responsabilidad a un o más recipients de Software Cubierto.
Aun así, puedes hacer tan sólo por tu cuenta behalf, y no encima behalf de cualquier Colaborador.
Tal descripción tiene que ser colocada en una lima de texto incluyó con todas las distribuciones del Software Cubierto bajo esta Licencia.
Los derechos concedieron bajo esta Licencia rescindirá automáticamente si fallas a comply con cualquier de sus plazos.
Miscellaneous ---------------- Esta Licencia representa el acuerdo completo respecto del asunto subject hereof.
Fundación de Mozilla de Versiones nueva es la auxiliar de licencia .
Puedes añadir avisos cuidadosos adicionales de propiedad de copyright.
Todo, naturalmente, sin olvidar cualquier paso vital!
Para más detalles, sólo leídos a través de la lima de configuración de la muestra.
Sencillamente seguir estos da un paso tan raíz: 1.
Editar la lima de configuración con vuestro editor favorito.
Tendrías que modificar la lima como apropiado a vuestros requisitos.
La razón principal tienes que instalar este programa manualmente es de modo que no olvidas para hacer Paso 3, la mayoría de importante un!
El copyright en este programa pertenece a John Zaitseff.
Complacer enviar estos a: Postal: John Zaitseff, Unidad 6, 116 Woodburn Carretera, Berala, NSW, 2141, Australia.
El por encima de los derechos pueden ser ejercitados en todos los medios de comunicación y formatos si ahora sabidos o de ahora en adelante ingenió.
El por encima de los derechos incluyen el derechos de hacer tales modificaciones como es técnicamente necesario de ejercitar los derechos en otros medios de comunicación y formatos.
Puedes Distribuir o Públicamente Actuar la Obra sólo bajo los plazos de esta Licencia.
Tienes que incluir una copia de, o el Identificador de Recurso Uniforme (URI) para, esta Licencia con cada copia de la Obra Distribuyes o Públicamente Actuar.
Puedes no sublicense la Obra.
Tienes que mantener intacto todo nota aquello refiere a esta Licencia y al descargo de responsabilidad de garantías con cada copia de la Obra Distribuyes o Públicamente Actuar.
Si creas una Colección, a aviso de cualquier Licensor Te tener que, al alcance practicable, saca de la Colección cualquier crédito como requerido por Sección 4(c), como pidió.
Si autorizas la Adaptación debajo uno de las licencias mencionó en (iv), tienes que comply con los plazos de aquella licencia.
Representaciones, Garantías y Descargo de responsabilidad .
Esta Licencia y los derechos concedieron hereunder rescindirá automáticamente a cualquier ruptura por Tú de los plazos de esta Licencia.
Subject al por encima de plazos y afecciones, la licencia concedió aquí es perpetuo (para la duración del copyright aplicable en la Obra).
Esta Licencia constituye el acuerdo entero entre las fiestas con respetar a la Obra autorizó aquí.
no hay ninguna comprensión, acuerdos o representaciones con respetar a la Obra no especificada aquí.
Licensor No será atado por cualesquier provisiones adicionales que puede parecer en cualquier comunicación de ti.
Creativo Commons no es una fiesta a esta Licencia, y hace ninguna garantía cualquier cosa en conexión con la Obra.
Distribución de Creativo Commons las licencias públicas no crea un abogado-cliente u otra relación.
Creativo Commons da ninguna garantía con respecto a sus licencias, cualquier materiales autorizados bajo sus plazos y afecciones, o cualquier información narrada.
Utilizando Creativo Commons Licencias Públicas .
Licensors Tendría que leer y entender los plazos y afecciones de la licencia escogen antes aplicándolo.
Licensors También tendría que asegurar todos los derechos necesarios antes de aplicar nuestras licencias de modo que el público puede reutilización el material como esperó.
Licensors Claramente tendría que marcar cualquier material no somete a la licencia.
Esto incluye otro CC- material autorizado, o material utilizado bajo una excepción o limitación a copyright.
Consideraciones para el público: Por utilizar un de nuestras licencias públicas, un licensor becas el permiso público para utilizar el autorizado material debajo especificó plazos y afecciones.
Si el licensor el permiso no es necesario para cualquier razón--por ejemplo, debido a cualquier excepción aplicable o limitación a copyright--entonces que el uso no es regulado por la licencia.
Nuestras licencias conceden permisos únicos debajo copyright y seguro otros derechos que un licensor tiene potestad para conceder.
Uso del material autorizado todavía puede ser restringido para otras razones, incluyendo porque otros tienen copyright u otros derechos en el material.
Un licensor puede hacer peticiones especiales, como pedir que todos los cambios ser marcados o describió.
A pesar de que no requerido por nuestras licencias, estás fomentado para respetar aquellas peticiones donde razonables.
Elementos de licencia significa los atributos de licencia listaron en el nombre de un Creativo Commons Licencia Pública.
Significa el individual o la entidad que ejercita el Autorizó Derechos bajo esta Licencia Pública.
Medios de comunicación y formatos; las modificaciones técnicas dejaron.
El Licensor Te autorizas para ejercitar el Autorizó Derechos en todos los medios de comunicación y formatos si ahora sabidos o de ahora en adelante creados, y para hacer modificaciones técnicas necesarios de hacer tan.
Oferta del Licensor -- Material Autorizado.
Oferta adicional del Licensor -- Material Adaptado.
Puedes satisfacer las afecciones en Sección 3(un)(1) en cualquier manera razonable basada en el medio, medio, y contexto en qué Compartes el Material Autorizado.
Tienes que incluir el texto de, o el URI o hiperenlace a, la licencia del Adaptador aplicas.
Esta Licencia Pública solicita el plazo del Copyright y los derechos Similares autorizaron aquí.
Al alcance posible, si cualquier provisión de esta Licencia Pública está considerada unenforceable, será automáticamente reformado al alcance mínimo necesario de hacerlo enforceable.
Creativo Commons no es una fiesta a sus licencias públicas.
Todas las texturas son libres de descargar y uso en ambos diseño personal y comercial proyectos.
Derechos de actuación Debajo Licencias de Manta.
Derechos mecánicos y Derechos Estatutarios.
Webcasting Derechos y Derechos Estatutarios.
Tienes que mantener intacto todo nota aquello refiere a esta Licencia y al descargo de responsabilidad de garantías.
Si autorizas la Obra Derivada debajo uno de las licencias mencionó en (iv), tienes que comply con los plazos de aquella licencia.
Compensi Por la comunicazione al pubblico o la rappresentazione od esecuzione di opere incluse en repertori.
Il Licenziante rinuncia al diritto esclusivo di riscuotere compensi, personalmente o por il tramite di un ente di gestione collettiva (anuncio es.
Altri compensi previsti dalla legge italiana.
Yo diritti sopra descritti potranno essere esercitati con ogni mezzo di comunicazione e en tutti i formati.
Una copia de la licencia está incluida en la sección tituló GNU Licencia de Documentación Libre.
Nosotros envase tanto nightly complexiones y emisiones.
Complexión única de fuente si tampoco quieres cambiar el comportamiento de esta herramienta, o es en una programa nosotros no todavía envase para.
Ejecuta sin parámetros para ver el uso.
Tendrías que haber recibido una copia del GNU Licencia Pública General Menor junto con esta biblioteca.
Esta lima está ofrecida tan-es, sin cualquier garantía.
El OFL deja el autorizó fuentes para ser utilizadas, estudiados, modificados y redistribuyó libremente mientras no son vendidos por ellos.
Las fuentes y derivados, aun así, no puede ser liberado bajo cualquier otro tipo de licencia.
Creemos que esto no fue significado para excluir versiones más tardías del GPL, como aquello habría cambiado la licencia de proyecto global.
Autoconf Crea un guión de configuración para un envase de una lima de plantilla que listas el sistema operativo consta que el envase puede utilizar, en la forma de M4 macro llamadas.
Produciendo guiones de configuración que utilizan Autoconf requiere GNU M4 y Perl.
Esto saca la necesidad de mantener muchos conjuntos similares de instrucciones de instalación.
Copiando y distribución de esta lima, con o sin modificación, es permitted en cualquier medio sin realeza proporcionó el aviso de copyright y este aviso están preservados.
Esta lima está ofrecida tan-es, sin garantía de cualquier clase.
Estas limas están actualizadas a menudo bastante que es difícil de mantenerles actual en dos envases diferentes.
Por default, Autoconf escogerá directorios de instalación que partido el GNU niveles.
Debian Sigue el alternativo Filesystem Nivel de Jerarquía (FHS), el cual es ligeramente diferente.
El Autoconf Configura versión de Excepción del Guión 3 es abajo: .
Tienes permiso para propagar salida de Autoconf, incluso si tal propagación otherwise violar los plazos de GPLv3.
La disponibilidad de esta Excepción no implica cualquier presunción general que tercer-software de fiesta es no afectado por el copyleft requisitos de la licencia de Autoconf.
Licencia: permissive-corto-el descargo de responsabilidad que Copia y distribución de esta lima, con o sin modificación, es permitted en cualquier medio sin realeza proporcionó el aviso de copyright y este aviso están preservados.
Limas: configura Copyright: 1992-1996, 1998-2012 Software Libre Fundación, Licencia
de Inc.: permissive-sin-avisos-o-descargo de responsabilidad Esto configura el guión es software libre ; la Fundación de Software Libre da unlimited permiso para copiar, distribuye y modificarlo.
FSF Los cambios a esta lima son en el dominio público.
Licencia: no-modificación Todo el mundo es permitted para copiar y distribuir verbatim copias de este documento de licencia, pero cambiando no es dejado.
Licencia: permissive Copiando y distribución de esta lima, con o sin modificación, es permitted en cualquier medio sin realeza proporcionó el aviso de copyright y este aviso están preservados.
Esto es Automake, un Makefile generador.
Apunta para ser portátil y para conformar al GNU Niveles de Codificación para Makefile variables y objetivos.
Automake Es un Perl guión.
Automake Viene con documentación extensa; complacer referir a él para más detalles sobre su propósito, características, y patrones de uso.
Es útil como un extensible, maintainable mecanismo para aumentar autoconf.
Está pretendido que otros autores de envase escribirán m4 macros cuáles pueden ser automáticamente utilizados por aclocal.
La documentación para aclocal es actualmente encontrado en el Automake manual.
Automake Tiene una prueba suite.
Utilizando él con una versión más temprana generará roto Makefiles.
También, ya no invoca libtoolize.
Aquello sería bueno, pero no es posible debido a la manera las obras de distribución del testaje.
Los envases cargaron para inestables logra probar después de que diez días, proporcionó están construidos para cada arquitectura liberada, tiene no RC-los bugs y sus dependencias pueden ser cumplidos en probar.
Tendrías que considerar el testaje y distribuciones inestables como dos lados de la misma moneda.
Vale, pero cómo sé qué distribución estoy corriendo?
Hay una emisión de punto nueva y he sólo upgraded mi sistema.
Después de que upgrading mi sistema recientemente, noté que algunas limas de base-las limas no emparejan los cuáles están instalados en un frescos instalar de apretón.
Tener que yo no ser advertido sobre aquel?
Aquellas limas son limas de configuración , así que son completamente bajo el control del sistema admin.
Las limas instaladas por base-las limas son sólo defaults.
Cambios en el default las limas no son bastante importantes para advertir el usuario, como es también póliza que apuntando tendría que ser reducido a un mínimo.
Esto es también la razón no son manejados vía dpkg conffile mecanismo.
Delego tales decisiones al grupo de póliza.
La manera de hacer este está explicado en el debian-envase de póliza.
Tan habitual, siempre tendrías que tomar un cariz en ya informó bugs contra debian-póliza antes de entregar un nuevo un.
Yo upgraded de leñoso a sarge.
Tener que mi sistema ser FHS-compliant ahora?
Consiguiendo FHS conformidad por upgrading sería delicado y prone a error en casos seguros, así que no es un gol de base-limas, ni está planeado para ser.
Por tanto, si estás corriendo cualquier clase de pruebas de conformidad, lo tendrías que hacer encima nuevamente sistemas instalados sólo.
Esto es el Debian prepackaged versión del Debian Sistema de Base Miscellaneous limas.
Copyright (C) 1995-2011 Software en el Interés Público.
Esto significa que todas las entradas en el masterfiles en aquella gama tiene que ser presente en vuestro sistema, y sólo aquellas entradas.
La razón para no dejando otras entradas es que Debian reservas que gama para uso futuro.
Todos los envases asumen que los usuarios y los grupos listaron en aquellos maestros-las limas son siempre presentes en un sistema.
Si no son presentar para alguna razón pueden romper inesperadamente.
Para asegurar vuestro sistema es te corriges puede utilizar la actualización-passwd utilidad para comprobarlo y opcionalmente hacer los cambios necesarios.
Están creados por sus envases respectivos.
Esto es el registro de asignaciones.
Sirve como textbook, un manual para self-estudio, y una remisión y fuente del conocimiento encima pela scripting técnicas.
Los ejercicios y fuertemente- comentó los ejemplos invitan participación de lector activo, bajo la premisa que la manera única a realmente aprender scripting es para escribir guiones.
Tendrías que haber recibido una copia del GNU Licencia Pública General junto con Bash.
Pasos de marca extra: La marca sencilla compila una versión de bc con parámetros fijos para el algoritmo de multiplicación recursivo.
El parámetro fijo es el número de dígitos donde un algoritmo secuencial está utilizado en vez del algoritmo recursivo.
La sintaxis es similar a C, pero difiere en muchos áreas sustanciales.
Las prórrogas añaden algunos consta pienso falta.
Las citas durante qué mantuvieron el envase está perdido a historia.
El binutils los manuales y la documentación asociada son también Copyright (C) Fundación de Software Libre, Licencia
de Inc.: BSD-Redistribuciónde4 cláusulas y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
El nombre de la Universidad no puede soler endosar o promover los productos derivaron de este software sin permiso escrito previo concreto.
Tendrías que haber recibido una copia del GNU Licencia Pública General Menor junto con este programa.
Este envase contiene una lista informativa de Complexión-Esencial Debian envases.
El origen de este software no tiene que ser misrepresented; no tienes que alegar que escribiste el software original.
El alias utilizó para almacenar el certificado es el basename prefijado con 'debian:'.
El Debian Envase ca-certificados ---------------------------------- Este envase incluye PEM limas de CA certificados para dejar SSL-basó aplicaciones para comprobar para la autenticidad de SSL conexiones.
Responsabilidad llena para evaluarles pertenece al administrador de sistema local.
Llamada justa 'dpkg-reconfigure ca-certificados' para ajustar los encuadres para confiar en o inutilizar las potestades de certificado instaladas.
Algunos navegadores de web, clientes de email, y otro software que uso SSL mantener su propio CA base de datos de confianza y no puede utilizar el confiado en CA certificados en este envase.
Los usuarios pueden ver dependencias inversas con 'aptos-cache showpkg ca-certificados'.
Las limitaciones encima Conceden Alcance .
Las licencias concedieron en esta Sección 2 es los derechos únicos concedieron bajo esta Licencia.
Distribución de Forma de Fuente .
Toda distribución de Software Cubierto en Forma de Código de la Fuente, incluyendo cualesquier Modificaciones que creas o al cual contribuyes, tiene que ser bajo los plazos de esta Licencia.
Distribución de Forma Ejecutable .
Distribución de una Obra más Grande .
Puedes crear y distribuir una Obra más Grande bajo plazos de Vuestra elección, proporcionado que Tú también comply con los requisitos de esta Licencia para el Software Cubierto.
Aplicación de Plazos Adicionales .
Puedes escoger ofrecer, y para cobrar un coste para, garantía, apoyo, indemnity u obligaciones de responsabilidad a un o más recipients de Software Cubierto.
Incapacidad a Comply Debido a Estatuto o Control --------------------------------------------------- .
Esta Licencia representa el acuerdo completo respecto del asunto subject hereof.
Fundación de Mozilla es la auxiliar de licencia .
Efecto de Versiones Nuevas .
Distribuyendo Código de Fuente Forma aquello es Incompatible Con Licencias Secundarias .
Prueba Un - Licencia de Forma de Código de Fuente Aviso ------------------------------------------- .
El CA los certificados instalados por este envase será implícitamente confió en.
Esto es sólo un ejemplo para cogerte empezado con una raíz local apropiada CA envase.
Ningún copyright está alegado, y el software es de ahora en adelante colocado en el dominio público.
O'Brien 2017-2018, Dell EMC 1996-1998, John D.
Licencia: Zlib Este software está proporcionado 'como-es', sin cualquier expresar o garantía implicada.
Este aviso no puede ser sacado o alterado de cualquier distribución de fuente.
Tan, Debian deja varias versiones de GCC para convivir en el mismo sistema, y selecciona el default versión mediante el gcc-defaults envase, el cual crea enlaces simbólicos como apropiados.
Estos envases dependerán en el correspondientes default compilador para aquella arquitectura.
Es imposible de enlazar el objeto archiva aquello obedece diferente ABIs a un ejecutable.
Es sólo apoyado como runtime biblioteca.
La retroalimentación apreciada -------------------- la retroalimentación sobre este documento está apreciada; preferentemente como Severidad: wishlist bug en contra Envase: gcc .
El c89 y c99 páginas de hombre están tomadas de netbsd: Copyright (c) 1999 El NetBSD Fundación, Inc.
Ni el nombre del NetBSD Fundación ni los nombres de sus colaboradores pueden soler endosar o promover los productos derivaron de este software sin permiso escrito previo concreto.
Para construir el GUI, necesitas Qt.
Está utilizado si construyes con reglas.
La lima está configurada para Estudio Visual 2019, pero la programa toolset puede ser cambiado fácilmente a versiones más viejas o más nuevas.
La solución contiene objetivos de programa para ambos x86 y x64.
Cscope Es una pantalla de texto la fuente basada que explora herramienta.
Utilizando cscope, fácilmente puedes buscar donde los símbolos están utilizados y definió.
Cscope Está diseñado para contestar a cuestiones les gusta: Dónde es esta variable utilizó?
Qué es el valor de este preprocessor símbolo?
Dónde es esta función en las limas de fuente?
Qué funciones llaman esta función?
Qué funciones se apellidan por esta función?
Dónde es esta lima de fuente en la estructura de directorio?
Qué limas incluyen esta lima de encabezamiento?
Ha sido liberado por La Operación de Cruz de la Santa, Inc tan Código abierto bajo el BSD licencia.
Una cosa para ser señalado fuera es que esto es software de Unix antiguo predating mucho de hoy preocupaciones de seguridad.
Mientras probamos para dirigir asuntos de seguridad como aprendemos aproximadamente les, tiene que ser dicho que esto es de ningún modo hardened o software seguro.
Está diseñado para ser utilizado por desarrolladores, no administradores o usuarios anónimos.
Contribuido por Ragho Mahalingam, utilizando código de Dmitry Obukhovi y Steven E.
Brenner Comentario: Parte de webcscope.
Licencia: BSD-4-Cláusula-UC Redistribución y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
Comentario: Cláusula 3 ha sido eliminado: julio 22, 1999 .
A Todo Licensees, Distribuidores de Cualquier Versión de BSD: .
Eficaz inmediatamente, licensees y los distribuidores son ya no requeridos para incluir el acknowledgement dentro de materiales publicitarios.
Necesitas no seguir los plazos del GNU Licencia Pública General cuándo utilizando o distribuyendo tales guiones, incluso aunque porciones del texto del Macro parecer en ellos.
Esta excepción especial al GPL aplica a versiones del Autoconf Macro liberados por el Autoconf Archivo.
Cuándo haces y distribuir una versión modificada del Autoconf Macro, puedes extender esta excepción especial al GPL para aplicar a vuestra versión modificada también.
Cada revisión está distinguida por un número de versión.
Permiso para copiar y distribuir verbatim las copias de este documento está concedida.
Edificio con la dieta libc --------------------------- Este envase opcionalmente puede ser construido con la dieta libc en vez del glibc para proporcionar pequeño statically enlazó programas.
El envase resultante No tiene ninguna dependencia en cualquier otro envase.
Fuentes de pizca para Debian ----------------------- La pizca Debian fuentes de envase son disponibles a través de git, y a través de 'aptos-coger pizca de fuente'.
Cargando el envase --------------------- Carga es actualmente manejado por dgit.
Comentario: Este código está derivado del software contribuyó a Berkeley por Kenneth Almquist.
Conklin Licencia: público-ámbito Este programa es en el Dominio público.
Comentario: Esta lima no es directamente enlazado con pizca.
Licencia: autoconf-archivo-permissive Copiando y distribución de esta lima, con o sin modificación, es permitted en cualquier medio sin realeza proporcionó el aviso de copyright y este aviso están preservados.
Ningún acuerdo escrito, licencia, o coste de realeza está requerido para cualquier del autorizó usos.
Gobierno y otros obrando en su behalf permiso para utilizar y distribuir el software de acuerdo con los plazos especificó en esta licencia.
Licencia: BSD-Redistribuciónde3 cláusulas y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
Licensor De ahora en adelante apalabra proporcionar una máquina-copia legible del Código de Fuente de la Obra Original junto con cada copia de la Obra Original que Licensor distribuye.
Nada en esta Licencia será considerado para conceder cualesquier derechos a marcas, copyrights, patentes, secretos de comercio o cualquiera otra hacienda intelectual de Licensor exceptúa tan expressly declaró herein.
Ninguna licencia de patente está concedida para hacer, uso, vende u oferta para vender embodiments de cualquier patente alega otro que el autorizado alega definido en Sección 2.
Ningún derecho está concedido a las marcas de Licensor incluso si tales marcas están incluidas en la Obra Original.
Esta limitación de la responsabilidad no aplicará a responsabilidad para muerte o el daño personal que resulta de Licensor negligencia al alcance la ley aplicable prohíbe tal limitación.
Esta licencia es Copyright (C) 2003-2004 Lawrence E.
El permiso es de ahora en adelante concedido para copiar y distribuir esta licencia sin modificación.
Esta licencia no puede ser modificada sin el expresar permiso escrito de su dueño de copyright.
Administradores de sistema con particularmente los usuarios locales hostiles tendrían que revisar estos límites y ponerles a punto si es necesario.
Si estás buscando documentación en debconf, instalar el debconf-doc envase y ver debconf(7) y las otras páginas de hombre en aquel envase.
Aquel envase también contiene el lleno changelog para debconf, si cualquiera se preguntaba.
Las firmas de limas de Emisión adquirida está comprobada contra esta base de datos clave.
Estos tonos son ya no utilizados para firmar limas de Emisión.
Más información sobre la característica de autentificación del archivo puede ser encontrada en el manpage apto-seguro(8).
Esto es Debian GNU GnuPG llaveros de tonos de archivo.
Todo más en el envase está cubierto por el GNU GPL.
Es un original Debian envase.
Limas: qué Copyright: Licenciadeámbito público: público-ámbito qué es en el dominio público.
Karr Copyright (C) 1992 Ronald S.
Todo el mundo es permitted para copiar y distribuir verbatim copias de esta licencia, pero cambiando no es dejado.
Los acuerdos de licencia de la mayoría de empresas de software mantienen tú en la piedad de aquellas empresas.
Para hacer seguro que todo el mundo tiene tales derechos, te tenemos que prohibir para privar cualquiera más de estos derechos.
Por eso nosotros (Landon Curt Noll y Ronald S.
Karr Vía la Fundación de Software Libre en 51 Franklin St, Quinto Piso, Boston, MA 02110-1301, EE.UU..
Hemos no todavía salió una regla sencilla que puede ser declarado aquí, pero a menudo permitiremos esto.
Vuestros comentarios y sugerencias sobre nuestras pólizas de autorizar y nuestro software son bienvenidos!
Este contrato estuvo basado en el contrato hecho por la Fundación de Software Libre.
Wayne Davison diseñado e implementó el formato de salida unificado.
Tendrías que haber recibido una copia del GNU Licencia Pública General junto con esta lima.
Como excepción especial, cuándo esta lima está leída por TeX cuándo procesando un Texinfo documento de fuente, puedes utilizar el resultado sin restricción.
Tendrías que haber recibido una copia del GNU Licencia Pública General Menor y del GNU Licencia Pública General junto con este programa.
Esto está creído para ser justos uso; pero si no, está cubierto por la licencia del documento de fuente bajo el 'comentario encima' cláusula.
El limitó los permisos concedieron encima es perpetuo y no será revocado por la Sociedad de Internet o sus sucesores o asigna.
El distro-info dato (en el distro-info-envase de datos) puede ser actualizado una vez, y todos los envases que lo utilizan tendrá el dato más tardío.
Esto evita teniendo que duro-código nombres de emisión de desarrollo actuales (y otro tal dato volátil) a envases.
Licencia: BSD-Redistribuciónde2 Cláusulas y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
Puede ser utilizado y distribuyó libremente para cualquier propósito.
Licencia: BSD-Redistribuciónde2 cláusulas y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
Esto es un (incompleto) lista de actualmente proporcionó APIs por dpkg, y su estado soportado.
Es sólo supuesto para ser utilizado internamente por dpkg por ahora.
Limas de encabezamiento, funciones, las variables y los tipos podrían coger rebautizados, sacados o cambiar semantics.
Nota aun así que el API está definido por qué está documentado en las páginas manuales correspondientes y nada más.
No puedes asumir cualquier cosa más basado en qué te leído en el código de fuente.
Para API prórrogas, el número menor será aumentado.
El derivó necesidad de módulos para implementar todo requirió documentó métodos.
De este modo ningún otro frontend siguiendo este protocolo puede correr para actuar operaciones mientras otro tiene uno en progreso.
El último no es siempre necesario aun así, por ejemplo dentro de un chroot, o algunos tipos de envases.
Es siempre permisible para un constructor para ignorar este campo y caída atrás a correr los objetivos binarios debajo (falsificación)raíz.
Esto es para asegurar atrás compatibilidad cuándo las complexiones están actuadas por constructores de legado o versiones más viejas del utillaje.
PUEDEN advertir sobre palabras clave desconocidas dentro de su namespace.
Estos están activados automáticamente por dpkg cuándo una lima de emparejar está instalada, upgraded o sacado tan parte de un envase.
Actualmente ninguno está definido además gatillos de lima.
Un gatillo es siempre activado por un envase particular.
Nombres de gatillo contienen imprenta única 7-mordió ascii caracteres (ningún whitespace).
Cada clase de gatillo tiene un subconjunto distinto del espacio de nombre del gatillo de modo que la clase puede ser determinada del nombre.
Cuándo un gatillo está activado, acaece pendiente para cada envase qué está interesado en el gatillo en aquel tiempo.
Cada envase tiene una lista de cero o gatillos más pendientes.
La activación repetida del mismo gatillo tiene no efecto adicional.
Nota que en general un gatillo no será procesado inmediatamente cuándo está activado; la tramitación es deferred hasta que es conveniente (como describió abajo).
Un envase qué tiene gatillos pendientes, o cuál aguarda gatillos, no es considerado propiamente instalado.
No obstante los esfuerzos todavía serán hechos para procesar sus gatillos con objeto de hacer la lista de los gatillos pendientes vacíos.
Esto deja envases en estados razonables por default.
Un envase cuyo postinst está siendo la carrera aun así puede adquirir gatillos pendientes durante aquella carrera (ie, un envase se puede provocar).
Tramitación de gatillo tendría que ser idempotente.
La lista de los gatillos que son procesados está proporcionado al postinst sólo de modo que puede optimizar fuera tramitación redundanda.
Cuándo escogiendo un nombre de gatillo explícito es normalmente bueno de incluir un nombre de envase pertinente o algunos otro identificador útil para ayudar hace el nombre de gatillo único.
Por otro lado, los gatillos explícitos tienen que generalmente no ser rebautizados sólo porque el interesados o provocando envases' cambio de nombres.
Forma de nombres de gatillo explícita parte de la interfaz entre envases.
El pathname tiene que ser absoluto.
Gatillos de lima tienen que no generalmente ser utilizados sin consentimiento mutuo.
Gatillos de lima tienen que sin duda no ser utilizados como un escalation herramienta en desacuerdos entre envases diferentes como al deseó contenidos del filesystem.
Activación de gatillo debido a una lima particular tiene que no generalmente modificar aquella lima otra vez.
La ruta especificada por el envase interesado está emparejado contra la ruta incluida en el envase de provocar, no contra el truename de la lima como instalado.
Sólo textually idéntico filenames (o filenames donde el interés es un prefijo de directorio de la lima instalada) es guaranteed para emparejar.
Debido a la restricción encima nombres de gatillo, no es posible de declarar un gatillo de lima para un directorio cuyo nombre contiene whitespace, i18n caracteres, etc.
Tal gatillo no tendría que ser necesario.
Envase declarations con respecto a gatillos --------------------------------------- Ver deb-gatillos(5).
Interfaces de línea de orden nuevas a dpkg herramientas ----------------------------------------- Ver dpkg(1).
Esto podría derrotar dpkg detección de ciclo del gatillo.
Una herramienta de gestión del envase cuál correrá dpkg --configurar --pendiente al final puede utilizar --no-gatillos en su otro dpkg carreras.
Esto sería más eficaz como deja más agresivo deferral (y de ahí más unificación) de provoca procesar.
Alternativamente, en algunas situaciones puede ser más deseable de dejar el envase interesado para ser configurado incluso aunque sólo puede proporcionar servicio parcial.
En este caso la información clara tendrá que ser dada en sitios apropiados sobre la funcionalidad desaparecida, y un récord tendría que ser hecho de la causa de los errores.
Esta opción está recomendada para situaciones donde el coupling entre el interesados y provocando el envase es particularmente suelto; un ejemplo de tal suelto coupling sería módulos de Pitón.
La implementación llena del plan de transición definió abajo, para scrollkeeper, va así: 1.
Un dpkg el gatillo suele arregla para actualizar el scrollkeeper índice de documentación automáticamente y no necesidad de cuidado especial ser tomado en envases qué suministro OMFs.
Sacar el spurious dependencias en scrollkeeper, en nuestro ocio.
Las consecuencias malas de las dependencias inexactas son menos severos que el contortions cuál sería requerido para tratar el problema.
Programasdenivel alto --------------------- El nuevos dpkg declarará versioned Conflictos contra aptos y aptitud y otras herramientas de gestión de envase críticas cuál será roto por los valores de campo de Estado nuevos.
Por tanto, las herramientasdenivel alto nuevas tendrá que ser desplegado primero.
El nuevo dpkg declarará versioned Pausas contra cualquier sabidos noncritical herramientas de gestión del envase cuál será roto por el valor de campo de Estado nuevo.
Esto puede ser hecho en nuestro ocio.
Por ejemplo, gatillos de lima no informan el envase del filename.
En el futuro esto podría ser añadido como una característica adicional, pero hay algunos problemas con este.
Envases de productor roto, y el error que informa --------------------------------------------- A menudo provoca procesar implicará un envase central que registra, compilando o generalmente parsing algún dato proporcionado por un envase de hoja.
Si el envase central encuentra problemas con el dato de envase de la hoja es normalmente más correcto para único el envase de hoja individual para ser grabado como no propiamente instalado.
no hay actualmente cualquier manera de hacer este y hay ningún plan para proporcionar uno.
Ve encima para la aproximación recomendable.
Para cada envase qué tiene gatillos pendientes, la lima de estado contiene unos Gatillos-campo Pendiente qué contiene el espacial-separó nombres de los gatillos pendientes.
Cada línea es un nombre de gatillo seguido por uno o más provocando nombres de envase.
Los procesos cuelgan a esta cerradura sólo brevemente: dpkg-provocar para añadir activaciones nuevas, o dpkg para incorporar activaciones (y quizás cuándo actualiza intereses).
Si la base de datos de estado está abierta para escribir entonces el dato de Unincorp está movido a actualizaciones como Gatillos-Pendientes y Gatillos-Aguardó entradas y cambios de Estado correspondiente.
Ciclos de gatillo están detectados utilizando la liebre habitual-y-aproximación de tortuga.
Si el conjunto de liebre es un superset del conjunto de tortuga, un ciclo ha sido encontrado.
Formalmente, allí está supuesto para ser un completo ordenando del gatillo pendiente pone satisfacer la afección que cualquier conjunto de gatillos pendientes es (estrictamente) más sumo que todo su (estricto) subconjuntos.
De vez en cuando, libero versiones nuevas de e2fsprogs, para fijar bugs y para hacer las utilidades más robustos.
Provisiones para construir Sombrero Rojo RPMs y Debian dpkg las limas están suministradas también.
Ver el e2fsck página de hombre para sugerencias de qué clase de información para incluir cuándo entregando informes de bug para estos programas.
Son distributable como GPL-2 y listados como tal para simplificación.
Exportación de este software de los Estados Unidos de América pueden requerir una licencia concreta del Gobierno de Estados Unidos.
Este código de fuente puede ser traducido a forma ejecutable e incorporado a software propietario; no hay ningún requisito para tal software para contener un aviso de copyright narró a esta fuente.
Comentario: La obra ha sido modificada.
Licencia: BSD-Redistribuciónde3 Cláusulas y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
Tendrías que haber recibido una copia del GNU Biblioteca Licencia Pública General junto con esta biblioteca.
El fakeroot el entorno puede ser salvado para uso más tardío si utilizas el -s opción a fakeroot.
Esto no obrará perfectamente, aun así.
El salvar la opción sencillamente salva esta lista, tan más tarde fakeroot las invocaciones les pueden restaurar.
Esto causará la lista para filtrar.
La lista puede no fácilmente ser verificado, tampoco, porque él cosas de tonos por inode número, y hay ningún mecanismo para mirar arriba cualquier cosa de uno de aquellos solo.
Esto no es realmente aceptable para operación regular, y no necesito tal característica así que no lo he escrito.
Naturalmente, aquella información es todavía fingida, pero tendrías que ser capaz a afortunadamente rsync lo atrás.
De este modo sólo necesitas privilegios de usuario normal en la máquina de copia de seguridad.
Esto es sumo de recular arriba de máquinas múltiples sin un compromise afectando la máquina de copia de seguridad y así compromising todo las otras máquinas reculas arriba también.
Esto presentará una regresión si las aplicaciones llaman el programa con el --uncompress opción, y lima(1) necesita la ayuda de programas externos para uncompression.
Licencia: BSD-2-Cláusula-regents Redistribución y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
Licencia: GPL con automake excepción Esta lima es software libre , distribuido bajo los plazos del GNU Licencia Pública General.
Licencia: ISC El ISC Licencia .
Copyright (c) 2023 por el titular de copyright .
Keith Packard marcas ninguna representación sobre la conveniencia de este software para cualquier propósito.
hay ahora un Debconf cuestión sobre este.
Es la fundación para una fuente nueva que maneja en X aplicaciones (pero también puede ser útil sin X).
Aplicaciones no utilizando fontconfig está accediendo sus fuentes a través del X servidor.
Unos cuantos de estas aplicaciones, utilizando Xft1, puede beneficiar de antialiasing con fuentes de vector, pero es deprecated.
La fuente nueva renderer en X se apellida freetype2, y las aplicaciones que lo utilizan fuentes de acceso en el lado de cliente.
Esto es ahora también cierto para las fuentes añadieron utilizar defoma.
Estos programas pueden todos benefician de antialiasing, autohinting y sub-píxel rendering.
Bitstream Vera es una marca de Bitstream, Inc.
DejaVu los cambios son en público ámbito.
Para información más lejana, contacto: fuentes en punto de gnomo org.
Porque repacking necesitado para ser hecho anyways, también otro precompiled limas y generados Makefiles estuvo sacado, para salvar cantidades considerables de espacio de disco.
El texto de allí está dado abajo.
Algunos de las licencias de las terceras herramientas de fiesta requieren para hacer la fuente disponible.
El runtime biblioteca, bibliotecas de envase, biblioteca de componente libre, y otras bibliotecas qué suele crear executables por el compilador venido bajo un modificado GNU Biblioteca licencia Pública General.
Hawes 1987 Equipamiento Digital Empresa, Maynard, Massachusetts 1987-1998 El Grupo Abierto 1988 Jef Poskanzer 1989-1991 Software Libre Fundación, Inc 1990 Regents de la Universidad de Míchigan 1991 J.
John Sprenger 1991-1989 Carnegie Mellon Universidad 1991-1998 Thomas G.
Aun así, el Debian equipo de Pascal alega que estas limas son meramente limas de interfaz, sólo definiendo tipos de dato.
Hay ningún código de instrucción.
Es nuestro entendiendo que esta clase de interfacing la lima no es cubierta por hacienda intelectual mientras la interfaz él es públicamente disponible.
Esta lima sólo utiliza bare hechos y API información del por encima de páginas más que descripciones o código, tampoco de los cuales son copyrightable.
Licencia: abandonado Esto anteriormente copyrighted la obra ha sido colocada al dominio público por el autor (Fred Pez) y puede ser libremente utilizado para cualquier propósito, privado o anuncio.
Lo apreciaría, como cortesía, si este aviso queda en todas las copias y obras derivadas.
El autor No hace ninguna garantía de cualquier clase con respetar a este producto y explícitamente disclaims cualquiera implicó garantías de merchantability o forma física para cualquier propósito particular.
Licencia: apache-2 Autorizado a la Fundación de Software del apache (ASF) debajo uno o más acuerdos de licencia del colaborador.
Licencia: BSD-Redistribuciónde3 cláusulas y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: .
Cualquier lima que resultados de una adición a, deletion de o modificación de los contenidos de una lima que contiene Software Original o Modificaciones anteriores; .
Cualquier lima nueva que contiene cualquier parte del Software Original o Modificación anterior; o .
Tienes que incluir una copia de esta Licencia con cada copia de la forma de Código de la Fuente del Software Cubierto distribuyes u otherwise la marca disponible.
Las Modificaciones que creas o al cual contribuyes está regido por los plazos de esta Licencia.
Tienes que incluir un aviso en cada de Vuestras Modificaciones que Te identificas como el Colaborador de la Modificación.
Aun así, puedes hacer tan sólo por tu cuenta behalf, y no encima behalf del Desarrollador Inicial o cualquier Colaborador.
Puedes crear una Obra más Grande por combinar Software Cubierto con otro código no regido por los plazos de esta Licencia y distribuir la Obra más Grande como producto solo.
Cada versión será dada una versión de distinguir número.
Usuarios de Fin del gobierno adquieren Software Cubierto con único aquellos derechos puestos adelante herein.
Cualquier ley o control qué proporciona que la lengua de un contrato será construed contra el drafter no aplicará a esta Licencia.
Nada herein está pretendido o será considerado para constituir cualquier admisión de responsabilidad.
Un módulo independiente es un módulo qué no es derivado de o basado en esta biblioteca.
Si modificas esta biblioteca, puedes extender esta excepción a vuestra versión de la biblioteca, pero no eres obligated para hacer tan.
Licencia: mencionar La fuente puede ser modificada mientras mi nombre parece y algunos nota explicar las modificaciones hechas está incluido en la lima.
Otros copyrights podrían aplicar a partes de este software y es tan notado cuándo aplicable.
Permiso para utilizar, copia, modifica, y distribuir este software es libremente concedido, proporcionado que este aviso está preservado.
Esto asume el crossbinutils y RTL de cruz es propiamente instalado y configuró.
Esto es un especial fpc utilidad genérica para simplificar la programa independiente makefile generación para el usuario.
Probamos encontrar las personas mencionaron en el correo encima internet, pero aquello falló.
Un programa I ya ported a M2 una vez.
El programa muestra un paisaje en qué te puede mover con los tonos de cursor.
Un efecto de estupefactar en justo 150 líneas.
Exceptúa tan contenido en este aviso, el nombre de Pawel W.
Olszta No será utilizado en publicitario u otherwise para promover la venta, uso u otro dealings en este Software sin autorización escrita previa de Pawel W.
Copyright (C) 2005, 2006, 2007, 2009, 2010, 2011, 2012, 2013, 2014, 2015, 2016, 2017, 2018, 2019, 2020, 2021, 2022 Software Libre Fundación, Inc.
es upwardly compatible con Brian Kernighan versión de Unix awk.
Si hay algo allí que te tendría que haber leído y no, y te bug me aproximadamente lo, estoy yendo a yell en ti.
También, gawk no obra correctamente con algunas versiones de yacc, uso tan justo Bisonte.
De modo parecido, hay un directorio separado para VMS.
El proceso de configuración está basado en GNU Autoconf y Automake.
Puede haber diferencias basó en instalado (o no instalado) locales y la calidad de multibyte apoyo de carácter en vuestro sistema.
Muchos de las pruebas ignoran errores a propósito; aquellos no son un problema.
Si hay otras diferencias, complacer investigar e informar el problema.
En particular, ver la sección en el manual encima informando bugs.
Tan también es uso de un foro de web como Stack Desbordamiento.
Complacer, uso los mecanismos perfilaron en el manual.
Esto es un separado mailing lista en GNU Central.
La ventaja a utilizar esta alocución es que informes de bug son archived en GNU Centrales.
Normalmente puedes coger un desarrollo reciente snapshot del gcc-snapshot envase en el inestable (o experimental) distribución.
De este modo eres capaz de seguir el río arriba el bug que maneja también.
Cómo para informar un bug ------------------- hay instrucciones completas en el gcc info manual (encontrado en el gcc-doc envase), Bugs de sección.
El más importante prerequisite para este es que el informe tiene que ser completo y self-contenido, el cual explicamos en detalle abajo.
Antes de que informas un bug, complacer comprobar la lista de bugsbiensabidos y, si es posible en cualquier manera, probar un desarrollo actual snapshot.
Una solución podría ser para traducir todo C bibliotecas con -fexceptions.
Si una función no es compilada que manera, entonces no tenemos el marco unwinding la información requirió para restaurar los registros cuándo unwinding.
Da las gracias por vuestro informe de bug.
Esto es un no un bug en el compilador, pero en vuestro código.
Es la última regla que vuestro código viola.
Stack Rompiendo la protección es una característica de GCC aquello habilita un programa para detectar buffer desbordamientos e inmediatamente rescindir ejecución, más que continuar ejecución con estructuras de dato internas corruptas.
Único activo cuando -fstack-protector ha sido utilizado.
El Debian alfa de arquitecturas, hppa, ia64, m68k, mips, mipsel no tiene apoyo para stack rompiendo protección.
Además, Debian proporciona el gm2 compilador, cualquiera en el mismo envase de fuente, o construido de un envase de fuente mismo separado.
De modo parecido, encima algunos 32-mordió programa cuáles pueden también corridos 64-mordió código, Debian proporciona envases adicionales con los nombres que empiezan con 'lib64' en vez de 'lib'.
Limas que tiene cláusulas de excepción están autorizadas bajo los plazos del GNU Licencia Pública General; cualquier versión 3, o (en vuestra opción) cualquier versión más tardía.
El libffi la biblioteca está autorizada bajo los plazos siguientes: libffi - Copyright (c) 1996-2003 Sombrero Rojo, Inc.
Cuándo utilizas GCC para compilar un programa, GCC puede combinar porciones de seguros GCC limas de encabezamiento y runtime bibliotecas con el programa compilado.
Notwithstanding Que, Código de Objetivo no incluye dato en cualquier formato que está utilizado como compilador representación intermedia, o utilizado para producir un compilador representación intermedia.
Ningún Debilitamiento de GCC Copyleft.
El autor reserva el derecho de distribuir este material en otro lugar bajo diferente copiando permisos.
Esta lima es parte del GNU C Biblioteca.
D: gdc-12 GNU D Compilador libphobos-12-dev D estándar runtime biblioteca El D envase de fuente está hecho arriba de los componentes siguientes.
En ningún caso los autores ser aguantados propensos para cualesquier daños que surgen del uso de este software.
El permiso está concedido a cualquiera para utilizar este software para cualquier propósito, incluyendo aplicaciones comerciales, y para alterarlo y redistribuirlo libremente, tema a las restricciones siguientes: 1.
Esta lima es parte de GNU Modula-2.
Una copia de esta licencia es ;; supuesto a ha sido dado a ti junto con GNU Emacs tan te ;; puede saber vuestros derechos y responsabilidades.
Entre otras cosas, el aviso de copyright ;; y este aviso tiene que ser preservado encima todas las copias.
Copyright (C) 2001-2018 Software Libre Fundación, Inc.
las licencias Seguras documentaron aquí sólo aplicar a objetivos concretos.
Las cláusulas seguras sólo aplican si estás construyendo el código como parte de vuestro binario.
Las partes de esta obra están autorizadas bajo los plazos del GNU Licencia Pública General.
Las partes de esta obra están autorizadas bajo los plazos del GNU Biblioteca Licencia Pública General.
Este software es un copyrighted la obra autorizada bajo los plazos del Cygwin licencia.
Todos otros derechos están reservados por AMD.
El número de dial directo es 512-462-4118.
Demetriou Copyright (c) 2001 Christopher G.
El nombre del autor no puede soler endosar o promover los productos derivaron de este software sin permiso escrito previo concreto.
Todos otros derechos están reservados por SuperH.
Tampoco el nombre de KTH ni los nombres de sus colaboradores pueden soler endosar o promover los productos derivaron de este software sin permiso escrito previo concreto.
Chernov Copyright (C) 1997 por Andrey Un.
Miller Copyright (c) 1998 Todd C.
Redistribución y uso en la fuente y las formas binarias es permitted proporcionado que el encima aviso de copyright y el párrafo siguiente están duplicados en todas tales formas.
Intel Becas este permiso proporcionó que el encima aviso de copyright parece en todas las copias y que ambos el aviso de copyright y este aviso de permiso parecen en documentación de apoyo.
Este software no es someter a cualquier licencia del Teléfono americano y Empresa de Telégrafo o del Regents de la Universidad de California.
El permiso está concedido a cualquiera para utilizar este software para cualquier propósito en cualquier sistema de ordenador, y para alterarlo y redistribuirlo, tema a las restricciones siguientes: 1.
El origen de este software no tiene que ser misrepresented, cualquiera por reclamación explícita o por omisión.
Alteró las versiones tienen que ser plainly marcados como tal, y no tiene que ser misrepresented como siendo el software original.
Los derechos transfirieron a Franklin Editores Electrónicos.
Tendría que ser notado que el sombrero Rojo Incorporó ahora posee copyrights perteneciendo a Cygnus Soluciones y Cygnus Apoyo.
Copyright (c) 1994, 1997, 2001, 2002, 2003, 2004 Sombrero Rojo Incorporó.
El nombre de Sombrero Rojo Incorporó no puede soler endosar o promover los productos derivaron de este software sin permiso escrito previo concreto.
El usuario asume el riesgo entero narró a su uso de este dato.
Ritter Licencia: Permisodeámbito público concedió para utilizar este software, siempre y cuando este aviso de copyright acompaña cualesquier productos derivaron therefrom.
Inc No ser utilizado en publicitario o la publicidad perteneciente a distribución del software sin concreto, permiso previo escrito.
Tengo (dentro de mis derechos) appropriated lo y colocados lo debajo la licencia siguiente.
Esto no es pretendido para disminuir Trent y contribución de Roberts.
Esto no es pretendido para disminuir Trents contribución.
Los autores No hacen ninguna representación sobre la conveniencia de este software para cualquier propósito.
Estos resultados en sobre un factor de dos aumento en velocidad en un PC de Poder G4 (PPC7455) utilizando gcc -O3.
El autor disclaims copyright a este código de fuente.
En sitio de un aviso legal, aquí es una bendición: .
Mayo tú bueno y no mal.
Mayo encuentras forgiveness para tú y perdonar otros.
El autor ha dedicado el código al dominio público.
El código estuvo modificado a una forma propio para uso en CPL.
El algoritmo se debe a Ron Rivest.
Este código estuvo escrito por Colin Aploma en 1993, ningún copyright está alegado.
El código equivalente es disponible de Seguridad de Dato de la RSA, Inc.
Este código estuvo modificado en 1997 por Jim Kingdon de Cyclic Software a no requerir un entero escribe cuál es exactamente 32 bits.
Yo de ahora en adelante disclaim copyright en cualesquier cambios he hecho; estos restos de código en el dominio público.
Este código de fuente está proporcionado 'como-es', sin cualquier expresar o garantía implicada.
El origen de este código de fuente no tiene que ser misrepresented; no tienes que alegar que escribiste el código de fuente original.
Puedes utilizar este software para cualquier quieres.
No puedes fingir que escribiste este software.
Este software es copyright (C) 1991-1998, Thomas G.
Estas afecciones aplican a cualquier software derivado de o basado en el IJG código, no sólo al unmodified biblioteca.
El permiso NO es concedido para el uso de cualquier IJG los nombre o nombre de empresa del autor en publicitarios o la publicidad que narra a este software o los productos derivaron de él.
Es copyright por la Fundación de Software Libre pero es libremente distributable.
Por ello codificación de aritmética puede no legalmente ser utilizado sin obtener un o más licencias.
El IJG distribución anteriormente código incluido para leer y escribir GIF limas.
Miller, Sergio Monesi, Keith Owens, George Petrov, Greg Roelofs, Kai Uwe Rommel, Steve Salisbury, Dave Herrero, Steven M.
Schweda, cristiano Spieler, Cosmin Truta, Antoine Verheijen, Paul von Behren, Gales Rico, Mike White .
Licencia: libpng Esta copia del libpng los avisos está proporcionado para vuestra comodidad.
no hay ninguna garantía en contra interferencia con vuestra diversión de la biblioteca o en contra contravención.
no hay ninguna garantía que nuestros esfuerzos o la biblioteca cumplirán cualquiera de vuestros propósitos particulares o necesidades.
Andreas Dilger Dave Martindale Tipo Eric Schalnat Paul Schmidt Tim Wegner .
Libpng Es OSI Software de Código abierto Certificado.
Licencia: PostgreSQL PostgreSQL Sistema de Gestión de la Base de datos (anteriormente sabido como Postgres, entonces tan Postgres95) .
Copyright de porciones (c) 1996-2006, PostgreSQL Grupo de Desarrollo Global .
Copyright de porciones (c) 1994, El Regents de la Universidad de California .
Barbero y El Centro de Geometría.
Qhull Es copyrighted tan notado encima.
Licencia: zlib Este software está proporcionado 'como-es', sin cualquier expresar o garantía implicada.
GDB Es un programa complejo.
GDB la documentación es también disponible on-line.
Licencia: BSD-Copyrightde3 cláusulas (c) El Regents de la Universidad de California.
La disponibilidad de esta Excepción no implica cualquier presunción general que tercer-software de fiesta es no afectado por el copyleft requisitos de la licencia de GCC.
Esto es el Debian prepackaged versión del GNU gettext utilidades.
Copyright y licencia para el gettext herramientas: Copyright (C) 1995-2020 Software Libre Fundación, Copyright
de Inc. y licencia para el libintl biblioteca: Copyright (C) 1995-2020 Software Libre Fundación, Copyright
de Inc. y licencia para libasprintf biblioteca: Copyright (C) 1999-2020 Software Libre Fundación, Copyright
de Inc. y licencia para libgettextpo biblioteca: Copyright (C) 1999-2020 Software Libre Fundación, Copyright
de Inc. y licencia para gettext documentación: Copyright (C) 1995-2020 Software Libre Fundación, Inc.
Este manual es documentación libre .
Es dually autorizado bajo el GNU FDL y el GNU GPL.
Esto significa que puedes redistribuir este manual debajo cualquiera de estas dos licencias, en vuestra elección.
Este manual está cubierto por el GNU FDL.
Este manual está cubierto por el GNU GPL.
Esto es el GNU gettext envase.
Está interesando para autores o maintainers de otros envases o programa cuál quieren ver internationalized.
Como uno da un paso el manejando de los mensajes en lenguas diferentes tendrían que ser implementados.
Para esta tarea GNU gettext proporciona el necesitó herramientas y funciones de biblioteca.
También está interesando para traductores, porque GNU gettext proporciona el soysgmerge' programa, el cual prepara un mensaje cataloga antes de una actualización de traducción.
El configurar el guión proporciona una opciónnoestándar.
Es también disponible en otros envases que uso la funcionalidad de GNU gettext.
Uso --inutilizar-nls si absolutamente no quieres tener los mensajes que manejan código.
Siempre cogerás los mensajes originales (mayoritariamente ingleses).
Podrías considerar utilizar NLS apoyo incluso cuándo no necesitas otras lenguas.
Si no instalas cualesquier mensajes cataloga o no especifica para utilizar otro pero el C locale te no cogerá traducciones.
El conjunto de lenguas para qué cataloga tendría que ser instalado también puede ser especificado mientras configurando.
Naturalmente tienen que ser disponibles pero la intersección de estos dos conjuntos está computada automáticamente.
Esta licencia es Copyright (C) 2003 Lawrence E.
Creativo Commons Código Legal .
Esta excepción especial al GPL aplica a versiones del Autoconf Macro liberados por este proyecto.
Licencia: Kuchling-PD Distribuir y uso libremente; no hay ninguna restricción en uso y diseminación más lejanos excepto aquellos impuestos por las leyes de vuestro país de residencia.
Licencia: Aploma-PD El algoritmo se debe a Ron Rivest.
Este código es en el dominio público; hacer con él qué deseas.
Nombre: Emulación para urna(2) de gnulib.
Licencia: mingw-runtime Esta lima no tiene ningún copyright asignado y está colocado en el Dominio público.
Eres libre de utilizar este envase y su código sin limitación.
Licencia: Impulso está autorizado bajo el Software de Impulso Autoriza cuál básicamente te significas puede hacer cualquier cosa te gusta con él.
Configurar un servidor de web para git.
Aquí es un ejemplo para un apache servidor virtual.
Su interfaz era modeled después del pcl-cvs modo.
Es ahora mantenido tan parte de Emacs e incluido en estándar Emacs distribuciones.
Git Es un proyecto de Código abierto cubierto por el GNU versión de Licencia Pública General 2 (algunos separa de es bajo licencias diferentes, compatibles con el GPLv2).
Era originalmente escrito por Linus Torvalds con ayuda de un grupo de hackers alrededor de la red.
La discusión que les sigue dar una remisión buena para estado de proyecto, dirección de desarrollo y tareas restantes.
Git Fuentes para Debian ---------------------- El git Debian fuentes de envase son disponibles a través de git, y a través de 'aptos-coger fuente git'.
La versión de emisión actual es disponible en la rama de emisión.
Esto ha sido hecho más eficaz.
El fusionar-resolver la estrategia creó una lima regular con marcadores de conflicto en él en sitio del enlace simbólico.
El default estrategia, fusionar-recursivo era aún más roto.
Sacó la ruta que estuvo señalado en por el enlace simbólico.
Estas características no son habilitadas por default, como harán el repositorio unusable con versiones más viejas de git.
Más viejo git-los clientes nativos pueden todavía fetch de un repositorio que empaquetado y pruned refs (las necesidades de lado del servidor para correr la versión actual de git), pero los transportes mudos más viejos pueden no.
Un repositorio con los inicios de diseño remotos separados con únicos uno default rama, soyaster', para ser utilizado para vuestro desarrollo propio.
Sólo lista vuestras ramas propias.
Más temprano recomendamos controlar cantidad de objetos sueltos y repack asiduamente, pero tienes que repack cuándo acumulaste demasiadas bandas pequeñas de este modo también.
Esto continuará ser el caso.
Bruce Campos, Frank Lichtenheld, Alex Riesen y otros.
Andrew más Grosero empezado una guerra en undocumented opciones.
También contiene varias actualizaciones de documentación.
Esto estuvo fijado para emparejar el comportamiento con --índice.
Maneja nested multipart mejor.
Esto tendría que ser más noticeable en git-familia de registro de órdenes que implica leer muchos objetos de árbol.
El sitio apropiado para hacer este es el poste nuevo-recibir gancho.
Es rumored que el más viejo uno no fue sólo unusable pero era salud activa hazard, pero esto uno es de hecho bastante.
El gitattributes el mecanismo te dejas para añadir 'atributos' a rutas en vuestro proyecto, y afectar la manera segura git obra de operaciones.
Nosotros no que cuando hay ningún rebautizar, así que partido que comportamiento.
Ahora dejamos tal cambio de rama después de hacer seguro que hay ninguna lima localmente modificada ni un-lima ignorada en el directorio.
Manejamos tal caso un poco más cuidadosamente, incluso aunque aquello es todavía dejado como conflicto para el usuario para poner orden.
Utilizamos para tener git-p4 envase pero nosotros no anymore.
Pienso que la organización nueva es mucho más fácil de leer.
El error no impactó correctness, percepción de usuario único.
Este bug impactó sistemas como AFS.
También contiene actualizaciones al manual de usuario y documentación.
Nota que el apoyo de submódulo actual es mínimo y esto es intencionadamente tan.
Una decisión de diseño hicimos es que operaciones en el supermodule nivel no recurse a submódulos por default.
Resulta que esto no fue tan útil.
Esto ha sido cambiado de modo que 'git' el envase contiene sólo las partes de núcleo, y ahora suministramos 'git-todo' metapackage a slurp en todo.
También incluido es un handful actualizaciones de documentación.
Tan habitual, también viene con mucha documentación fija y aclaraciones.
Está inutilizado en tales programa por ahora.
En otras palabras,, esto no te significa será bien si te aferras a un más viejo git emisión.
Un apropiado fija hopefully materializar en versiones más tardías.
Era un UI equivocación.
También viene con varias actualizaciones de documentación.
Ahora pueden tomar absolutos pathnames en tal caso mientras el pathnames no refiere exterior del árbol de obra.
Esto ayudará reimplementing más cosas en C.
Contiene otra varias documentación fija.
También contiene muchas actualizaciones de documentación.
También contiene documentación numerosa typofixes.
También incluye la documentación menor fija y actualizaciones.
Esto significó que el estado de salida de la cosa entera proviene el pager, no el subyacente git orden.
Este asunto está siendo dirigió.
Muchos actualizaciones de documentación pequeña están incluidas también.
Para aliviar el plan de transición, el repositorio de recibir de tal empujón que corre esta emisión emitirá un aviso grande cuándo la variable de configuración falta.
Esto es aceptó no sólo dónde un nombre de objeto está esperado, pero anywhere un nombre de rama está esperado y leyes como si escribiste el nombre de rama.
Muchos otras actualizaciones de usabilidad generales alrededor texto de ayuda, mensajes de diagnóstico y la documentación están incluidos también.
Incluye otras actualizaciones de documentación y el menor fija.
Para anunciar la característica nueva, un aviso grande está emitido si esto no es configurado y un git el empujón sin riñas está intentado.
Este workaround utilizado para ser habilitado por default, pero problemas de causas con versiones más nuevas de docbook-xsl.
Además, hay unos cuantos más knob puedes tweak para obrar alrededor de asuntos con varias versiones del docbook-xsl envase.
Otras actualizaciones de documentación menores están incluidas.
Otro menor fija y actualizaciones de documentación están incluidas.
Puedes utilizar espacio-en-eof y espacio-en-eol whitespace clase de error para especificarles por separado.
Como no especifica cualquiera otra rama para fusionar, no tendría que ser equivocado como tal.
Otras actualizaciones de documentación menores son también incluidas.
Cuándo utilizando básico aplomando órdenes en guiones, esto innecesariamente retrasó cosas abajo.
Utilizó para dar nuevo mtime a copió limas, pero esto colección de basura retrasada para provocar innecesariamente en el repositorio clonado.
Estos cambios estuvieron hablados tiempos largos hace y existiendo los comportamientos han sido identificados tan más problemáticos al userbase que manteniéndoles por el bien de backward compatibilidad.
Tú hopefully es ya bien preparó.
Este cambio no te afecta si te corrido la orden sin pathspec.
Y otro menor fija y actualizaciones de documentación.
Esto les hace compatible con otros programas ejecutaron por git, y te dejas para pasar orden-parámetros de línea al helpers.
Cualquier helper las rutas que contienen espacios u otro metacharacters ahora necesitar ser concha-citado.
Ahora está esperando una medida expresó en bytes, con un sufijo de unidad posible de 'k', soy', o 'g'.
Si construyes con hilos, compresión de delta siempre lo aprovechará.
También contiene menor fija y actualizaciones de documentación.
El gitweb la prueba olvidó para utilizar que Perl cuándo corriendo su prueba.
No hemos decidido todavía cuál para cambiar a.
También contiene actualizaciones de documentación menor y el código limpio-ups.
También contiene menor typofixes y actualizaciones de documentación.
Esto causó parches que hubo pathnames en ninguno otros sitios para ser mistakenly rehusados (la mayoría notablemente, parche binario que no rebautiza ni modo de cambio).
También contiene actualizaciones de documentación numerosa.
También contiene un handful de actualizaciones de documentación.
Otro menor fija y actualizaciones de documentación son también incluidas.
También contiene varias actualizaciones de documentación y menores miscellaneous cambios.
Este undocumented misfeature aquello no existió ha sido excised.
Agit Corriendo encima Androide con 4kb ventana).
Él ya no esto.
También contiene otras actualizaciones de documentación y código menor cleanups.
También contiene otro menor fija y actualizaciones de documentación.
También contiene varias documentación fija.
El mensaje ahora también asesora cómo a sync les arriba por pulsar o estirando.
El enlace ha sido actualizado para señalar en un sitio alternativo.
También contiene un handful del código trivial limpio-ups, actualizaciones de documentación, actualizaciones a la prueba suite, etc.
Una opción de configuración puede decir Git para ignorar cambios a la mayoría del stat campos y sólo parar atención a mtime y medida, el cual estas implementaciones pueden reliably actualización.
También contiene varias actualizaciones de documentación menores.
También contiene varias actualizaciones de documentación y el código limpio-ups.
Más allá, rápidamente-la exportación no necesitó llena en-representación de objeto del núcleo para tener parsed wen lectura de ellos.
Este codepath ha sido actualizado a correctamente toma existir definiciones remotas a cuenta.
También contiene typofixes, actualizaciones de documentación y el código trivial limpio-ups.
Pathnames Con estos asuntos potenciales están rehusados en el afectó sistemas.
Estos son ahora controlados por separado a mejores soportar la carga.
Empezando de esta emisión, la línea de orden está pasada directamente a la concha, si tiene una riña.
Un handful de antiguo manda aquello mucho tiempo ha sido deprecated es finalmente ido (repo-config, alquitrán-árbol, perdido-encontrado, y peek-remoto).
Leído la documentación para otras posibilidades.
Muchos de ellos provinieron flurry de actividades como candidato de GSoC microproject ejercicios.
También muchísimo fija a las pruebas y algunos actualiza al docs está incluido.
El default ha sido cambiado a 'falso'.
Aun así, el puntual todavía parecerá si mergetool utilizado su autodetection sistema para adivinar qué herramienta para utilizar.
Usuarios quién explícitamente especifica o configurar una herramienta ya no verá el puntual por default.
También contiene algunas actualizaciones de documentación.
Era fácil de hacer equivocaciones en uno-de standalone programas (gusta prueba helpers).
Esto aun así chutado en incluso cuándo el comprobado-fuera necesidades de copia para pasar por el convertir-a-git conversión (incluyendo el filtro limpio), el cual derrota el punto entero de la optimización.
El último aun así resultó no para servir cualquier propósito útil.
Aun así, esto también impidió comprobar fuera de una rama, el cual está designado como la rama primaria de un bare repositorio, en un worktree aquello está conectado al bare repositorio.
Esto resultado en fallo innecesario.
Ajusta unos cuantos de ellos en fusionar-documentación de base para obrar alrededor les.
La lógica sugiere para utilizar 12 hexdigits para el Linux kernel, y 9 a 10 para Git él.
Este error es ahora acompañado por un dar a entender que listas los objetos que empiezan con el prefijo dado.
Como las ventanas no deja sacando o rebautizando una lima que tiene un descriptor de lima abierto, un lento-a-niño de salida incluso puede romper el proceso de padre por aguantar a ellos.
Aun así, esto también impidió comprobar fuera de una rama qué está designado como la rama primaria de un bare repositorio, en un worktree aquello está conectado al bare repositorio.
Esto resultado en fallos innecesarios.
La esperanza es que existiendo los usuarios no importarán este cambio, y finalmente el aviso puede ser girado a un error duro, upgrading el deprecation a traslado de este (mis)característica.
Utilizamos para explicar qué fue mal con un mensaje de error, pero el código nuevo silenciosamente falló.
Hemos probado duros de localizar tales casos y fijados les, pero todavía podría haber casos que necesidad de ser dirigida--informes de bug son mucho apreció.
Estos días son equivalentes y no hay ninguna razón a internamente expandirlo.
Esto es ahora impedido por correr la parte temprana también bajo el GC cerradura.
También contiene un handful de documentación y código pequeños limpios-ups.
Ahora aplicamos algunas reglas para submódulo nombra cuál causará Git para ignorar estos malicious nombres (CVE-2018-11235).
Crédito para fijar para estos bugs va a Jeff King, Johannes Schindelin y otros.
Ver sus notas de emisión para detalles.
Crédito para encontrar y fijando esta vulnerabilidad va a joernchen y Jeff King, respectivamente.
En Ventanas, backslashes es directorio separators.
Crédito para encontrar estas vulnerabilidades va a Centro de Respuesta de Seguridad de Microsoft, en particular a Nicolas Joly.
Un caso de esquina que pasa para obrar ahora mismo puede ser roto por una llamada a BUG().
Un cariz-arriba para un objeto que no existe aun así es bastante costoso con un repositorio con número grande de packfiles.
No contiene cualquiera otras actualizaciones de documentación o el código limpio-ups.
Esto deja el CI categorize los fallos mejores ('fallados' es proyecto' falta, 'errored' es entorno de complexión es).
El ataque ha sido hecho imposible por prohibir un newline carácter en cualquier valor pasado vía el credential protocolo.
Crédito para encontrar la vulnerabilidad va a Felix Wilhelm de Proyecto de Google Cero.
El ataque ha sido hecho imposible por rechazar para obrar con debajo-especificado credential patrones.
Crédito para encontrar la vulnerabilidad va a Carlo Arena.
Crédito para encontrar y fijando esta vulnerabilidad va a Matheus Tavares, ayudado por Johannes Schindelin.
Un bug que causa las limas sucias implicaron en un rebautizar para ser overwritten durante fusiona también ha sido fijado tan parte de esta obra.
Estos lstat(2) las llamadas están optimizadas fuera por enumerar todos los objetos sueltos por adelantado.
Mientras algunos de ellos tienen que probar contra nombres de objeto exacto, la mayoría de ellos no tienen que utilizar hardcoded constantes en la prueba.
Para las rutas añadieron con intent-a-añadir mordió, la orden asoma los contenidos llenos de ellos tan añadidos, pero las rutas ellos no fue marcado como limas nuevas.
Esto es un backward-cambio incompatible.
Con el reciente reimplementation en C, empezó a en cambio dado con un mensaje de error, como la lógica original no fue preparada para soportar este caso.
Crédito para encontrar esta vulnerabilidad va a Joern Schneeweisz, crédito para el fija va a Jonathan Nieder.
Guiones que confiados en el comportamiento puede coger roto con este cambio.
NonStop) Para añadir BOM a la salida para aumentar portabilidad.
Además, esta versión también incluye un par de fija para las Ventanas-concretos citando de orden-riñas de línea cuándo Git ejecuta una concha de Unix en Ventanas.
Peor, las limas en su árbol laborable pueden ser añadidas como si son una parte del repositorio exterior, el cual no es qué el usuario quiere.
La implementación de esta lógica estuvo rota para repositorios con nombre inusual, el cual desafortunadamente es la norma para submódulos estos días.
También contiene varias actualizaciones de documentación, el código limpio-ups y menor fixups.
De esta emisión, empezamos para desalentar su uso y personas de pista aproximadamente filtro-repo.
La documentación ha sido actualizada en un intento de aclarar esto.
Ha sido renovado a coherentemente skip revisiones que ya ha sido probado, basado en el objeto de árbol de la revisión.
El bug estuvo descubierto e informado por Joern Schneeweisz de GitLab al git-seguridad mailing lista.
Un menor glitch en un no-default la instalación puede normalmente no merecer un hotfix, pero sé Git para las ventanas embarcan binaries construidos con esta opción, así que dejado marca una excepción.
Restringir el dejó protocolos a bien sabidos y seguros unos.
Aprendió para parar atención a fronteras de carácter (asumiendo el UTF-8 payload).
Límite tanto la periodo y el alfabeto a un espacio razonablemente pequeño que todavía puede tener bastante entropía.
Tweak El knob para dejar otros trabajos mantienen correr incluso cuándo vemos un fallo, de modo que podemos encontrar más fallos en una carrera sola.
Crédito para encontrar CVE-2022-39253 va a Cory Snider de Mirantis.
El fijar era authored por Taylor Blau, con ayuda de Johannes Schindelin.
Crédito para encontrar CVE-2022-39260 va a Kevin Backhouse de GitHub.
El fijar era authored por Kevin Backhouse, Jeff King, y Taylor Blau.
Esta funcionalidad es también expuesta a git archivo vía la exportación-subst gitattribute.
También puede ser provocado indirectamente a través de git archivo vía la exportación-subst mecanismo, el cual expande interior de especificadores del formato de limas dentro del repositorio durante un git archivo.
Git Silenciosamente las rupturas tacha más largas que 2KB cuándo parsing gitattributes de una lima, pero no cuando parsing les del índice.
Consequentially, el modo de fallo depende encima si la lima existe en el árbol laborable, el índice o ambos.
Este desbordamiento de entero puede resultar en arbitrario heap lee y escribe, los cuales pueden resultar en ejecución de código remoto.
Crédito para encontrar CVE-2022-41903 va a Joern Schneeweisz de GitLab.
Una inicial fija era authored por Markus Vervier de X41 D-Sec.
Crédito para encontrar CVE-2022-23521 va a Markus Vervier y Eric Sesterhenn de X41 D-Sec.
El propuesto fija ha sido abrillantado y extendido para cubrir hallazgos adicionales por Patrick Steinhardt de GitLab, con ayuda de otros en el Git seguridad mailing lista.
Crédito para encontrar CVE-2023-22490 va a yvvdwf, y el fijar estuvo desarrollado por Taylor Blau, con ayuda adicional de otros en el Git seguridad mailing lista.
Crédito para encontrar CVE-2023-23946 va a Joern Schneeweisz, y el fijar estuvo desarrollado por Patrick Steinhardt.
Crédito para encontrar CVE-2023-25652 va a Ry0taK, y el fijar estuvo desarrollado por Taylor Blau, Junio C Hamano y Johannes Schindelin, con la ayuda de Linus Torvalds.
Un workaround ha sido implementado y habilitado para macOS para reestrenar abierto() limpiamente de la visita cuándo esto pasa.
Esto cae usuarios a un unfamiliar situación si la orden estuvo corrida en un subdirectorio que acaece subject a traslado debido a la orden.
El manejando del estado de salida ha sido unificado para estas dos rutas de código.
Según el orden el stdio las corrientes son flushed en el fin de programa, este resultado en confundir salida.
Esta emisión de mantenimiento ought para fijarlo.
Porque no hemos oído de cualquiera quién de hecho necesitado para utilizar la escotilla de evasión, ha sido sacado, haciendo apoyo de variadic macros un requisito duro.
En tal caso, todas las pruebas saldrán con 126 o 127 códigos de error, incluso en revisiones que está marcado como bueno.
Tales limas eran duras de descubrir, y más duros de corregir.
Él también añadido más procesos nuestra necesidad de pruebas para matar cuándo limpiando arriba.
También contiene un handful de pequeño y trivially-correcto bugfixes.
También contiene otras actualizaciones de documentación menores y el código limpio-ups.
Esta emisión también backports fija necesario de dejar las CI complexiones pasan exitosamente.
Pero encima algunas programa que no es un bueno heurístico.
Pero este patrón puede dirigir a punto muerto.
Ambos de estos habrían resultado en escribir sobre un debajo-destinó buffer cuándo formulando pathnames mientras árbol traversal.
Aun así tratamos un filtro que no lee su entrada plenamente antes de salir como un error.
Esto cambia semantics, pero arguably en una manera buena.
Añade pruebas para demostrar esto.
Esto causó rápidamente-importar para olvidar el árbol del anterior cometer y entonces re-leído él de arañazo, el cual era inefficient.
Añade aviso a documentación de cada y cada uno de ellos.
Este puntero no fue actualizado incluso cuándo el cache la entrada estuvo sacada del índice, dirigiendo para utilizar después de libre.
También incluye un handful de documentación y actualizaciones de prueba.
También incluye prueba y documentación minúsculas actualizaciones.
También incluye documentación y actualizaciones de prueba.
También contiene unos cuantos fija backported de pistas de desarrollo más tardío.
Los créditos van a Brian Neel en GitLab, Joern Schneeweisz de Recurity Laboratorios y Rey de Jeff en GitHub.
El API ha sido sacado y sus usuarios han sido reescritos para simplificar la complejidad de código global.
Alguien puede querer seguir esto arriba con una prueba adicional, quizás?
Esto es necesario de utilizar Git en las ventanas compartieron directorios, y es ya habilitado para el MinGW y complexiones de Ventanas sencillas.
También ha sido utilizado en Cygwin packaged versiones de Git para bastante un rato.
Aun así, su control no fue hecho temprano bastante y dejó otro error para provocar, informando que el default valor adivinamos del encuadre de sistema era unusable.
Estas pruebas son ahora skipped en programa que no son aplicables a.
No otro cambio está incluido en esta actualización.
Software contribuido A pesar de que estas piezas son disponibles como parte del oficial git árbol de fuente, son en un poco estado diferente.
No estoy esperando para tocar estos yo que mucho.
Según lo que mi día-a-operación de día está concernida, estos subdirectorios están poseídos por sus autores primarios respectivos.
Esto es la misma manera tan qué he sido tratando gitk, y a un grado menor varios extranjero SCM interfaces, así que sabes la martillo.
Por otro lado, espero seré proponer traslado de abandonado e inactive unos de vez en cuando.
Estudio visual 2019 y más tarde detectará el CMake configuración automáticamente y poner todo arriba para ti, a punto para construir.
Los parches que resultan de soyake coccicheck' es pequeño e infrecuente, tan una vez están encontrados, pueden ser enviados al mailing lista como por habitual.
Un conflicto textual surgiría si el código circundante cercano cualquier llamada de tales cambios de función.
Un conflicto semántico surge cuándo otra serie de parche en vuelo presenta llamadas a tales funciones.
Así que a ayuda esta escala grande refactorings, los parches semánticos pueden ser utilizados.
Aun así no les queremos almacenar en el mismo sitio como los controles para patrones malos, tan entonces automatizó las complexiones fallarían.
Esto deja para exponer planes de escala grande pendiente refactorings sin impactar los controles de patrón malos.
Esto hace el corrido más rápido, como no necesitamos para correr cada regla contra cada lima de fuente.
Él caches en Redis por default, verlo fuente para un qué-a.
El tiempo absoluto diferirá para ti, pero el relativo speedup de caching tendría que ser en aquel orden.
Esto está hecho por consultar la historia de cada parche o revisión hunk para encontrar las personas mencionaron por comete cuál tocó las líneas de limas debajo consideración.
La entrada consta de uno o más limas de parche o riñas de revisión.
Limas de parche y riñas de revisión pueden ser combinadas en la misma invocación.
Una vez la lista de participantes está sabida, la pertinencia de cada persona está computada por considerar cuántos comete mencionado que la persona comparada con el número total de comete debajo consideración.
La salida final consiste sólo de participantes quiénes superan un umbral mínimo de participación.
En el futuro, estas afecciones pueden acaecer configurable.
A veces, aun así, cuándo una línea vieja y una línea nueva son muy similares, es duro a inmediatamente ver la diferencia.
Aun así, esto a menudo puede ser duro de leer para código, como pierde la estructura de línea, y acabas con oddly formatted bits.
En cambio, este poste de guión-procesos la línea-orientó diff, encuentra pares de líneas, y destaca los segmentos de diferir.
Es actualmente muy sencillo y estúpido aproximadamente haciendo estas tareas.
Esto es sencillo y tiende para obrar bien en práctica.
En cambio podría hacer un real diff de los caracteres entre las dos líneas y encontrar común subsequences.
Aun así, el punto del punto destacado es para llamar atención a una área segura.
Incluso si algunos subconjunto pequeño del área destacada de hecho no cambió, aquello es VALE.
En practica acaba ser más legible a sólo tener un solo blob en la línea que asoma el interesante mordió.
El gol del guión es por tanto no para ser exactos aproximadamente destacando cambios, pero para llamar atención a áreas de interés sin ser visually distrayendo.
No-diff líneas y existiendo diff coloration está preservado; el intent es que la salida tendría que mirar exactamente igual como la entrada, excepto el punto destacado ocasional.
En este caso, existiendo los colores están caídos de aquella línea.
El default la función imprime cada línea a stdout.
El default función flushes stdout.
Después de proporcionar todas las líneas, llamada DiffHighlight::flush() a flush cualquier unprocessed líneas.
Bugs ---- Porque diff-el punto destacado confía en heuristics para adivinar qué partes de cambios son importantes, hay algunos casos donde el destacando es más distrayendo que útil.
Afortunadamente, estos casos son raros en práctica, y cuándo ocurren, el caso peor es sencillamente un poco extra destacando.
Dos cambios en la misma línea cogen destacados en un blob.
El multi-tacha emparejar asume que líneas en el pre- y poste-partido de imagen por puesto.
Esto es a menudo el caso, pero puede ser fooled cuándo una línea está sacada del superior y un nuevo uno añadido en el fondo (o viceversa).
A no ser que las líneas en el medio son también cambiados, diffs asomará esto como dos hunks, y no cogerá destacado en absoluto (cuál es bueno).
Pero si las líneas en el medio están cambiadas, el destacando puede ser misleading.
Este directorio utilizó para contener scripted implementaciones de builtins aquello desde entonces ha sido reescrito en C.
Ahora han sido sacados, pero puede ser recuperado de un más viejo cometer aquello les sacó de este directorio.
Git-El salto puede generar cuatro tipos de listas interesantes: 1.
Por contraste, git-el salto proporciona el editor con una lista completa de limas, líneas, y un número de columna para cada partido.
Limitaciones ----------- Este guión estuvo escrito y probado con vim.
Las fragmento de concha para generar el quickfix líneas casi ciertamente choke en filenames con caracteres exóticos (como newlines).
La muestra programa callable a través de git-concha.
Sitio un directorio nombrado 'git-concha-órdenes' en el directorio de casa de un usuario cuya concha es git-concha.
Entonces cualquiera logging en como aquel usuario será capaz de correr executables en el 'git-concha-órdenes' directorio.
Proporcionó órdenes: ayuda: Huellas fuera de los nombres de órdenes disponibles.
Complacer no me contacta utilizando github correo; es despacio, feo, y peor de todo, redundando.
Por ejemplo, podrías incluir el código de fuente para una biblioteca como subdirectorio de vuestra aplicación.
Subtrees No es para ser confundido con submódulos, los cuales están significados para la misma tarea.
Un subtree es sólo un subdirectorio que puede ser cometido a, branched, y fusionado junto con vuestro proyecto en cualquier manera quieres.
Son también no para ser confundidos con utilizar el subtree fusiona estrategia.
A diferencia del subtree fusiona estrategia puedes alternar atrás y adelante entre estas dos operaciones.
Aquello es, si haces un cambio que afecta ambos la biblioteca y la aplicación principal, comete él en dos piezas.
Aquella manera, cuándo partiste la biblioteca comete fuera de más tardío, sus descripciones todavía sentido de marca.
Un nuevo comete está creado automáticamente, uniendo la historia del proyecto importado con vuestro propio.
Esto puede soler pulsar vuestro subtree a ramas diferentes del repositorio remoto.
Esta opción es obligatoria para todas las órdenes.
Extracto un subtree utilizando 'cometer', soyerge' y 'atracción' --------------------------------------------------------------- Dejado uso el repositorio para el git código de fuente como un ejemplo.
Pero imaginarlo había sido mantenido por separado, y quisimos extraer git cambios a gitweb desde aquel tiempo, para compartir con el río arriba.
Dejará incluyes parches inline en emails en una manera fácil.
Todo S-O-B:s y Cc:s en el parche será añadido a la CC lista.
Zenity Es una dependencia requerida.
El encabezamiento nuevo entonces puede ser cometido.
Esto está hecho por servicios de usuario habilitante vía casquete-activación.
Si un servicio dado no es sistema instalado-ancho, o si es sistema instalado -ancho pero no globalmente usuarios habilitados , individuales todavía necesitarán habilitar les.
Por ejemplo, si estás utilizando la Nube de Google CLI con Motor de Aplicación del Google, vuestro uso además sería regido por los Plazos de Motor de Aplicación de Google de Servicio.
Si vuestro sistema de complexión utiliza CMake, el ExternalProject la orden puede soler complexión gtest, entonces FindGTest puede soler encontrar la biblioteca construida.
Licencia: BSD-C3 Copyright 2008, Inc. de Google
Esto es la configuración recomendable para gpg-agente ssh-emulación de agente en desktop las máquinas que corren systemd, y no necesita cualquier configuración adicional.
Copyright (C) 1992, 1997-2002, 2004-2022 Software Libre Fundación, Inc.
Todos los bugs informaron en las emisiones anteriores han sido fijadas.
Muchos los bugs nuevos apasionantes probablemente han sido presentados en esta revisión.
Dónde es el groff documentación?
No es fácil de encontrar cuándo eres unfamiliar con el sistema (como bien recuerdo).
Algunos parches han sido aplicados a groff fuera del debian directorio.
Está autorizado bajo el GNU Licencia Pública General (GNU GPL), versión 3 o más tarde.
Todo archiva parte de groff está autorizado bajo esta versión del GPL (o autoriza cuáles son compatibles con el GPL).
Eres libre de escoger versión 3 o cualquier versión subsiguiente del GPL.
I e-mailed el río arriba maintainer para aclarar el intent de este.
He no fundar tiempo a revert el FDL material atrás a GPL.
Copyright (c) 1991, 1993 El Regents de la Universidad de California.
Unlimited Copiando y la redistribución de esta lima es permitted mientras esta lima no es modificada.
Copyright (C) 1995, 1996, 1997, 1998 Steffen Beyer Copyright (C) 1996-2007, 2009 Sol Microsystems, Inc.
Amundson Copyright (C) 1998-2004 Tor Lillqvist Copyright (C) 1998-2001, 2005, 2006 Tim Janik Copyright (C) 1998-2020 Sombrero Rojo, Copyright
de Inc. (C) 1994-1997 Sol Microsystems, Copyright
de Inc. (C) 2000 Sombrero Rojo, Inc.
Los titulares de copyright no hacen ninguna representación sobre la conveniencia de este software para cualquier propósito.
El derecho de distribuir este software o para utilizar él para cualquier propósito no te da el derecho de utilizar Servicemarks (sm) o Marcas (tm) de los titulares de copyright.
Si cualesquier limas están modificadas, tienes que causar el modificado archiva para llevar los avisos prominentes que declaran que cambiaste las limas y la cita de cualquier cambio.
Aviso de copyright y Plazos de Licencia para HDF5 (Formato de Dato Jerárquico 5) Biblioteca de Software y Utilidades ----------------------------------------------------------------------------- .
Esto es el default fallback el tema utilizado por implementaciones de la especificación de tema del icono.
Visión general -------- intel-vaapi-la motor es el VA-API implementación para Intel G45 chipsets e intel HD Gráfico para Intel familia de procesador del Núcleo.
Una Contribución 'origina' de un Colaborador si estuvo añadido al Programa por tal Colaborador él o cualquiera obrando en tal Colaborador behalf.
La licencia de patente no aplicará a cualesquier otras combinaciones qué incluir la Contribución.
Cada Colaborador disclaims cualquier responsabilidad a Recipient para las reclamaciones trajeron por cualquier otra entidad basó encima contravención de derechos de propiedad intelectual u otherwise.
Como condicionar a ejercitar los derechos y las licencias concedieron hereunder, cada Recipient de ahora en adelante asume responsabilidad única para asegurar cualquiera otros derechos de propiedad intelectual necesitaron, si cualquiera.
Los distribuidores comerciales de software pueden aceptar responsabilidades seguras con respetar para acabar usuarios, socios empresariales y el gustar.
Las obligaciones en esta sección no aplica a cualesquier reclamaciones o las pérdidas que narran a cualquier reales o contravención de hacienda intelectual alegada.
Por ejemplo, un Colaborador podría incluir el Programa en una ofrenda de producto comercial, Producto X.
Aquel Colaborador es entonces un Colaborador Comercial.
Si aquel Colaborador Comercial entonces hace reclamaciones de actuación, o garantías de ofertas narraron a Producto X, aquellas reclamaciones de actuación y las garantías son la responsabilidad de tal Colaborador Comercial sólo.
Si todo Recipient los derechos bajo este Acuerdo rescinden, Recipient apalabra cesa uso y distribución del Programa apenas razonablemente practicable.
Todo el mundo es permitted para copiar y distribuir copias de este Acuerdo, pero para evitar incongruencia el Acuerdo es copyrighted y sólo puede ser modificado en la manera siguiente.
El Auxiliar de Acuerdo reserva el derecho de publicar versiones nuevas (incluyendo revisiones) de este Acuerdo de vez en cuando.
Nadie otro que el Auxiliar de Acuerdo tiene el derecho de modificar este Acuerdo.
La Fundación de Eclipse es la Auxiliar de Acuerdo inicial .
La Fundación de Eclipse puede asignar la responsabilidad de servir como el Auxiliar de Acuerdo a una entidad separada adecuada.
Cada versión nueva del Acuerdo será dada una versión de distinguir número.
El Programa (incluyendo Contribuciones) siempre puede ser distribuido subject a la versión del Acuerdo debajo que lo estuvo recibido.
Además, después de una versión nueva del Acuerdo está publicada, el colaborador puede elegir para distribuir el Programa (incluyendo sus Contribuciones) bajo la versión nueva.
Este Acuerdo está regido por las leyes del Estado de Nueva York y las leyes de hacienda intelectuales de los Estados Unidos de América.
Ninguna fiesta a este Acuerdo traerá una acción judicial bajo este Acuerdo más de un año después de la causa de acción surgió.
Cada fiesta waives sus derechos a una prueba de jurado en cualquier resultante litigation.
Comentario: tendrías que haber recibido una copia del GNU Licencia Pública General junto con este programa.
Ninguna marca o la propiedad industrial aguantaron por Affirmer es waived, abandonado, rendido, autorizado u otherwise afectado por este documento.
Más allá, Affirmer disclaims responsabilidad para obtener cualesquier consentimientos necesarios, los permisos u otros derechos requirieron para cualquier uso de la Obra.
IBM es el Auxiliar de Acuerdo inicial .
IBM puede asignar la responsabilidad de servir como el Auxiliar de Acuerdo a una entidad separada adecuada.
Es altamente recomendado para tocar con SymPy.
Toda la documentación para SymPy puede ser encontrado en la página de casa.
Si quieres tajo en jq, siente gratis, pero ser advertido que su internals no es bien-documentado en el momento.
Traer un sombrero duro y una pala.
Necesitarás una cruz-entorno de recopilación, como Mingw para quecompilacruz para Ventanas.
Si creas una Colección, a aviso de cualquier Licensor Te tener que, al alcance practicable, saca de la Colección cualquier crédito como requerido por Sección 4(b), como pidió.
Controles o leyes adicionales pueden aplicar.
Si no apalabras los plazos siguientes, no recupera el OpenVision Kerberos sistema de administración.
OpenVision Retiene todos los copyrights en el Código de Fuente dado.
OpenVision También retiene copyright a obras derivadas del Código de Fuente, si creado por OpenVision o por una tercera fiesta.
El OpenVision aviso de copyright tiene que ser preservado si las obras derivadas son hizo basado en el Código de Fuente dado.
Es la responsabilidad de cualquier persona o la organización que contempla exportación para obtener tal licencia antes de exportador.
FundsXpress Marcas ninguna representación sobre la conveniencia de este software para cualquier propósito.
Copyright de porciones (C) 2006 Instituto de Massachusetts de Tecnología Todos los Derechos Reservaron.
Las redistribuciones en forma de fuente tienen que retener declaraciones de copyright y avisos, 2.
Las redistribuciones tienen que contener un verbatim copia de este documento.
Puedes utilizar este Software bajo plazos de esta revisión de licencia o bajo los plazos de cualquier revisión subsiguiente de la licencia.
Título a copyright en este Software en todo momento quedará con titulares de copyright.
Copyright de porciones (C) 2009 Inc. de Apple
Ni el nombre del Instituto ni los nombres de sus colaboradores pueden soler endosar o promover los productos derivaron de este software sin permiso escrito previo concreto.
Cygnus El apoyo No hace ninguna representación sobre la conveniencia de este software para cualquier propósito.
Copyright 1995 por Richard P.
Copyright 1995 por Lehman Hermanos, Copyright
de Inc. (C) 1997, 1998 El NetBSD Fundación, Inc.
Este código estuvo contribuido al NetBSD Fundación por Klaus Klein.
Todos los derechos reservaron, todas las injusticias revocaron.
Copyright 1990,1991,2007,2008 por el Instituto de Massachusetts de Tecnología.
Si no eliminas las provisiones encima, un recipient puede utilizar vuestra versión de esta lima bajo cualquier el BSD o el GPL.
El GNU Licencia Pública General, como publicado por la Fundación de Software Libre; cualquier versión 3, o (en vuestra opción) cualquier versión más tardía.
Si no, escribe a la Fundación de Software Libre, 59 Sitio de Sien, Suite 330, Boston, MA 02111-1307, EE.UU..
Licencia: Menos Redistribución y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
No derivado de software autorizado.
Está pretendido para software aquello quiere apoyar Blu-rayo playback (como VLC y MPlayer).
Nosotros, los autores de esta biblioteca, no condona ni endosar piratería.
Esta biblioteca es sencillamente una herramienta para playback de Blu-películas de rayo.
Como cualquier herramienta, el uso de esta herramienta también puede ser insultada.
hay ya leyes numerosas en países diferentes y juridictions en todo el mundo aquello protege copyrighted material, como Blu-películas de rayo.
En cambio, presentamos a todo el mundo este descargo de responsabilidad.
Las personas mantendrán su copyright y sus derechos de autoría, mientras adhiriendo a la licencia.
Nosotros no, pero los parches son muy bienvenidos.
Si tienes cualesquier cuestiones o preocupaciones, complacer no duda para contactarme.
Esto es un módulo para computar la diferencia entre dos limas, dos series, o cualquiera otras dos listas de cosas.
Este envase contiene unas cuantas partes.
Algoritmo::Diff es el módulo que contiene varias interfaces para qué computando las diferencias betwen dos listas.
Un::D es propio para muchos usos.
Modificaciones para hacer él a un real lleno-constó diff con -c y -u las opciones suministraron por Amir D.
Sí, puedes utilizar este programa para generar parches.
Gracias gracias gracias, Amir!
Pursuant A la Convención de Berna para la Protección de Obras Literarias y Artísticas, está asumido que todo contenido es copyright por sus autores respectivos a no ser que otherwise declaró.
Esta licencia es directamente de Licensor a Licensee.
El riesgo entero como a implementar u otherwise utilizando la Implementación de Remisión o la especificación está asumida por el implementer y usuario.
Licensor expressly disclaims Cualesquier garantías (expresa, implicado, u otherwise), incluyendo implicó garantías de merchantability, no-contravención, forma física para un propósito particular, o título, narrado al material.
Este código ha sido probado en contra que, y es equivalente, exceptúa que no necesitas para incluir dos páginas de legalese con cada copia.
El nombre de cualquier autor no puede soler endosar o promover los productos derivaron de este software sin su permiso escrito previo concreto.
Este código está derivado del software contribuyó al NetBSD Fundación por Charles M.
Bosque, derivado de obra original por Spencer Thomas y Joseph Orost.
Tendrías que haber recibido una copia del CC0 Dedicación de Dominio público junto con este software.
Esta biblioteca es libre para comercial y usonocomercial mientras las afecciones siguientes son aheared a.
Restos de copyright Eric Young es, y como tales cualesquier avisos de Copyright en el código no es para ser sacado.
Si este envase está utilizado en un producto, Eric Young tendría que ser atribución dada como el autor de las partes de la biblioteca utilizaron.
Masato Taruishi Tomó encima encima 17 Oct 1999.
La accesibilidad está inutilizada en openjdk por default.
Esto es porque rompe algunas aplicaciones, notablemente no-roscados unos.
Para el ATM-narrado kernel código, la autoría es típicamente grabada a principios de limas.
Nota que algunas partes contienen código de muchos autores, del cual único el principal un(s) es o está listado.
El LAN código de Emulación es Copyright por Tampere Universidad de Tecnología - Laboratorio de Telecomunicaciones.
Está liberado bajo el GNU Licencia Pública General.
Wheeler Tom Tromey Sombrero Rojo, Inc.
Qué es el GNU versión de Licencia Pública General 2.
FFmpeg También puede ser combinado con bibliotecasnolibres, el cual haría el resultante binaries unredistributable.
Pero esto no es hecho para el Debian envases.
Uso el programa aun así ves cabido.
Nosotros específicamente permiso y fomentar el uso de este software como la base de productos comerciales, proporcionados que toda garantía o reclamaciones de responsabilidad están asumidas por el vendedor de producto.
Este aviso de copyright tiene que ser mantenido.
Estas limas eran anteriormente embedded en envases múltiples dentro de Debian.
Tendrías que haber recibido una copia del GNU versión de Licencia Pública General 2 junto con este programa.
Esto puede ser útil en escenarios de investigación - angostando abajo la causa de una regresión; o verificando que la causa subyacente de unas expectativas de partidos de mejora de actuación.
La característica no requiere modificando benchmark código.
Colección de contador está manejada en las fronteras donde colección de temporizador es también manejó.
Actualmente, pre-construyó las ruedas existen para macOS (ambos ARM64 e intel x86), Linux x86-64 y 64-mordió Ventanas.
Él aleatoriamente interleaves repeticiones de un microbenchmark con repeticiones de otro microbenchmarks en el mismo benchmark prueba.
Exactamente cómo para hacer este depende en la distribución de Linux, desktop entorno, y programas instalados.
Los detalles concretos son un objetivo emotivo , así que no intentaremos a exhaustively les documenta aquí.
Esta herramienta está mantenida junto con el Linux kernel y proporcionado por vuestra distribución.
Algunos, pero no todo, de las fuentes de varianza incluyen: 1.
Reduciendo las fuentes de varianza es OS y la arquitectura dependiente, el cual es uno razona algunas empresas mantienen las máquinas dedicaron a testaje de actuación.
Algunos del más fáciles y y maneras eficaces de reducir varianza en un Linux típico workstation es: 1.
Pone el benchmark la afinidad de tarea del programa a un fijo cpu.
Reducir el conjunto laborable de vuestro benchmark a apto dentro del L1 cache, pero es consciente que esto te puede dirigir para optimizar para un unrelistic situación.
Recursos más lejanos en este tema: 1.
Complacer enlazar vuestro programa en contra él en cambio.
Los titulares de copyright No proporcionan ninguna tranquilidad que el código de fuente proporcionado no infringe cualquier patente, copyright, o cualquiera otros derechos de propiedad intelectual de terceras fiestas.
Si modificas esta lima, puedes extender esta excepción a vuestra versión de la lima, pero no eres obligated para hacer tan.
Cuándo el código Cubierto está liberado como series de limas, una Modificación es: .
Tienes que causar todo Código Cubierto al cual contribuyes para contener una lima que documenta los cambios hiciste para crear aquel Código Cubierto y la cita de cualquier cambio.
Si creaste uno o más Modificación(s), puedes añadir vuestro nombre como Colaborador al aviso descrito en Exhibir Un.
Apalabras obra con afectó fiestas para distribuir responsabilidad en un equitable base.
Más probablemente todas tales limas sin incidentes pueden ser consideradas bajo la Licencia de Software del Impulso.
King III 2016 Jorge Lodos 2010 Vicente J.
King III 2010 Vicente J.
Botet Escriba 2002-2003 William E.
Botet Escriba 2001-2003 William E.
Kohlhoff 2008 Rep Sistemas Invariables, Licencia
de Inc.: BSD2 Redistribución y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
Para contacto de información técnica Andrew Lumsdaine en los Laboratorios de Tecnología Dominantes en Universidad de Indiana.
Para administrativo y cuestiones de licencia contactan la Búsqueda Adelantada e instituto de Tecnología en 351 Del oeste 10.ª Calle.
Universidad de Indiana No proporciona ninguna tranquilidad que el código de fuente proporcionado no infringe la patente o cualquiera otros derechos de propiedad intelectual de cualquier otra entidad.
CrystalClear El software No hace ninguna representación sobre la conveniencia de este software para cualquier propósito.
Hewlett-Packard La empresa No hace ninguna representación sobre la conveniencia de este software para cualquier propósito.
Licencia: Licencia de Mermelada es de ahora en adelante concedida para utilizar este software y distribuirlo libremente, mientras este aviso de copyright está retenido y las modificaciones son claramente marcadas.
Kempf Marcas ninguna representación sobre la conveniencia de este software para cualquier propósito.
Tampoco el Autor ni la Institución (Instituto Nacional de Niveles y Tecnología) hace cualesquier representaciones sobre la conveniencia de este software para cualquier propósito.
Licencia: OldBoost1 Permiso para utilizar, copia, modifica, redistribuye y vender este software, proporcionado que este aviso de copyright parece encima todas las copias del software.
Licencia: OldBoost2 Permiso para copiar, uso, modifica, vende y distribuir este software es concedió proporcionado este aviso de copyright parece en todas las copias.
Licencia: OldBoost3 Permiso para copiar, uso, vende y distribuir este software es concedió proporcionado este aviso de copyright parece en todas las copias.
Gráfico de silicio No hace ninguna representación sobre la conveniencia de este software para cualquier propósito.
Licencia: BSD-4-cláusula-Niels-Provos Redistribución y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
Licencia: BSD-3-cláusula-John-Birrell Redistribución y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
Licencia: libutil-David-Nugent Redistribución y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
Esta obra estuvo hecha expressly para inclusión a FreeBSD.
Las modificaciones pueden ser libremente hechas a esta lima que proporciona el por encima de las afecciones están cumplidas.
Algún código está derivado del software contribuyó al NetBSD Fundación por Jason R.
Algún código está derivado del software contribuyó al NetBSD Fundación por Julio M.
Algún código está derivado del software contribuyó al NetBSD Fundación por Jukka Ruohonen.
Licencia: BSD-2-cláusula-verbatim Redistribución y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
Mientras retienes esto te notas puede hacer cualquier quieres con este material.
Si cumplimos algún día, y piensas que este material merece la pena, me puedes comprar una cerveza a cambio.
Poul-Henning Kamp Licencia: BSD-3-cláusula-Regents Redistribución y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
Licencia: BSD-3-cláusula-Redistribución de autor y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
Licencia: BSD-2-cláusula-NetBSD Redistribución y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
Licencia: BSD-2-cláusula-Redistribución de autor y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
El DEC las porciones son bajo la licencia siguiente: Copyright de Porciones (C) 1993 por Empresa de Equipamiento Digital.
Tampoco el nombre(s) del autor(s) ni los nombres de sus colaboradores pueden soler endosar o promover los productos derivaron de este software sin permiso escrito previo concreto.
Las obras derivadas necesitan no ser autorizados bajo plazos similares.
Copyright (C) La Sociedad de Internet (2003).
Tampoco el nombre del proyecto ni los nombres de sus colaboradores pueden soler endosar o promover los productos derivaron de este software sin permiso escrito previo concreto.
Aun así, esta afección no es pretendida para aplicar a cadenas enteras de software.
Moshier: Copyright 2001 por Stephen L.
Copyright de valor 2004, 2005 Sombrero Rojo, Inc.
David Reveman marcas ninguna representación sobre la conveniencia de este software para cualquier propósito.
Gobierno como representado por el Administrador del Nacional Aeronautics y Administración Espacial.
Este gzip el código está distribuido bajo el GNU Público General.
De entre estas licencias, el usuario es libre de escoger la licencia o licencias bajo qué cfortran está utilizado.
Me contacto si gustarías ser capaz de escoger otra licencia.
Aun así, este Informe Técnico tiene que ser identificado como la fuente del dato de caracterización.
Esta Licencia aplica a cualquier manual u otra obra que contiene un aviso colocado por el titular de copyright que lo dice puede ser distribuido bajo los plazos de esta Licencia.
Una copia hecha en un otherwise formato de lima Transparente cuyo markup ha sido diseñado a thwart o desalentar modificación subsiguiente por los lectores no es Transparentes.
Además, tienes que hacer estas cosas en la Versión Modificada: .
La traducción está considerada una clase de modificación, así que puedes distribuir traducciones del Documento bajo los plazos de sección 4.
Puedes incluir una traducción de esta Licencia proporcionó que también incluyes la versión inglesa original de esta Licencia.
No puedes copiar, modifica, sublicense, o distribuir el Documento exceptúa tan expressly proporcionado para bajo esta Licencia.
La Fundación de Software Libre puede publicar versiones nuevas , revisadas del GNU Licencia de Documentación Libre de vez en cuando.
Andrew Tytula - Puerto de Windows.
Glenn Herteg - Trucajes, bugfixes, correcciones de documentación.
Muchos las limas individuales son bajo otras licencias.
Esta lima proporciona un inventario de los titulares de copyright y licencias de todas las limas en el árbol de fuente.
Brown Licencia: Garydeámbito público S.
La licencia de Brown es como sigue: .
Puedes utilizar este programa, o el código o las mesas extrajeron de él, como deseado sin restricción.
Tienes que obedecer el GNU Licencia Pública General en todos los respetos para todo del código utilizó otro que OpenSSL.
Si modificas lima(s) con esta excepción, puedes extender esta excepción a vuestra versión de la lima(s), pero no eres obligated para hacer tan.
Si no deseas para hacer tan, eliminar esta declaración de excepción de vuestra versión.
Si eliminas esta declaración de excepción de todas limas de fuente en el programa, entonces también eliminarlo aquí.
Tienes que obedecer el GNU Licencia Pública General Menor en todos los respetos para todo del código utilizó otro que OpenSSL.
Licencia: BSD-Redistribuciónde2 Cláusulas y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: .
Licencia: Zlib El zlib Licencia .
Este software está proporcionado 'como-es', sin cualquier expresar o garantía implicada.
Trie Es una clase de árbol de búsqueda digital, un método de indexación eficaz en qué tiempo de búsqueda es independiente de medida de base de datos.
Sólo toma O(m) tiempo de búsqueda, donde m es la periodo de la serie de búsqueda.
Comparably Como eficaz como hashing, trie también proporciona flexibilidad en incremental emparejando y manipulación de ortografía clave.
Esto lo hace ideal para léxico analyzers, así como deletreando diccionarios.
El siguiente es la licencia que aplica a esta copia de la Berkeley DB software.
Elimina prebuilt binaries que necesidad un Estudio Visual plugin para construir de fuente.
Eliminar un guión de concha que tiene una licencianolibre.
Copyright (c) 1990, 1993, 1994, 1995 El Regents de la Universidad de California.
Copyright (c) 1995, 1996 El Presidente y Socios de Universidad de Harvard.
Copyright (c) 1990-1996 Margo Seltzer.
Copyright (c) 1990, 1993, 1994, 1995, 1996 Keith Bostic.
Esta licencia rige uso del software acompañante.
Si utilizas el software, aceptas esta licencia.
Los colaboradores dan ningún expresar garantías, garantías, o afecciones.
Puedes tener derechos de consumidor adicional bajo vuestras leyes locales qué esta licencia no puede cambiar.
Al alcance permitted bajo vuestras leyes locales, los colaboradores excluyen el implicó garantías de merchantability, forma física para un propósito particular y no-contravención.
Esto lo hace un sistema ideal para almacenar preferencias de usuario (cuáles están leídos 1000s de tiempo para cada vez el usuario cambia un).
Estuvo creado con este usecase en mente.
Todas las preferencias están almacenadas en una lima binaria grande sola.
Layering De las preferencias es posibles utilizando limas múltiples (ie: para sitio defaults).
El servidor es sólo implicado en escribe (y no es activado en la sesión de usuario hasta la usuaria modifica una preferencia).
El servicio es stateless y puede salir libremente en cualquier tiempo (y es por tanto robusto contra accidentes).
La lista de rutas que cada proceso está mirando está almacenado dentro del D-Autobús daemon él (como señaldeD Autobuses reglas de partido).
Lee está actuado por acceso directo (vía mmap) al encima-base de datos de disco qué es esencialmente un hashtable.
Por esta razón, dconf lee típicamente implicar cero llamadas de sistema y es comparable a un hashtable lookup en plazos de velocidad.
Prácticamente hablando, en sencillo no-layered setups, dconf es menos de 10 tiempo más lento que GHashTable.
Escribe no es optimizado en absoluto.
Encima algunos sistemas de lima, dconf-el servicio llamará fsync() para cada escribir, los cuales pueden presentar una latencia de hasta 100ms.
Él teóricamente corrido en Mac OS pero no hay mucho punto a aquel (desde Mac OS las aplicaciones quieren preferencias de tienda en plist limas).
El dconf API no es particularmente amistoso.
Debido a este y la carencia de portabilidad, casi ciertamente quieres utilizar alguna clase de wrapper API alrededor lo.
Mayoritariamente, hay sólo una dependencia en Simplista.
Esto es una dependencia muy fuerte debido a que dconf sistema de tipo es GVariant.
El dconf-el servicio tiene una dependencia en libgio, tan hacer las bibliotecas de cliente que uso de marca de GDBus (y las utilidades que uso de marca de aquellas bibliotecas).
Si no puedes utilizar GSettings entonces tienes que probablemente quiere utilizar este próximo.
hay también un libdbus-1 biblioteca basada.
No depende en libgio, pero todavía depende en libglib.
No es recomendado para utilizar esta biblioteca a no ser que tienes una dependencia de legado en libdbus-1 (como en Qt aplicaciones).
Los goles primarios de esta implementación son portabilidad y facilidad de uso.
Está significado para ser rápidamente, pero no tan rápidamente tan posible.
Algunos las optimizaciones sabidas no son incluidas para reducir medida de código de la fuente y evitar compilar-configuración de tiempo.
Licencia: BSD-Copyrightde4 cláusulas (c) 1987, 1993, 1994 El Regents de la Universidad de California.
Comentario: Esta lima está distribuida bajo la misma licencia como debian-instalador.
Tendrías que haber recibido copia del GNU Licencia Pública General y el GNU Licencia Pública General Menor junto con este programa.
Comentario: Esta lima es parte del GNU C Biblioteca.
La biblioteca consta de rutinas de conversión eficaz que ha sido extraído del V8 motor de Javascript.
El código ha sido refactored y mejorado de modo que puede ser utilizado más fácilmente en otros proyectos.
Esto overwrites el existiendo Makefile.
Nota que esto inutiliza bibliotecas estáticas.
hay actualmente ninguna manera de construir ambas bibliotecas al mismo tiempo con cmake.
Copyright 2000 Gareth Hughes Copyright 2002 Frank C.
Earl Copyright 2002-2003 Leif Delgass Todos los Derechos Reservaron.
Copyright 2004 Felix Kuehling Todos los Derechos Reservaron.
Copyright 1998-2003 VÍA Tecnologías, Copyright
de Inc. 2001-2003 S3 Gráfico, Inc.
Este código está derivado del software contribuyó a Berkeley por Christos Zoulas de Cornell Universidad.
Johnson 2011 Daniel Richard G.
Copyright (C) 2010 por Jorge Jimenez, Belen Masia, Jose I.
Licencia: Licencia de rizo: BSD-Redistribuciónde2 cláusulas y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
Copyright (C) 1996-2011 Anthony Copyright Verde (C) 1996-2010 Software Libre Fundación, Inc Copyright (c) 2003, 2004, 2006, 2007, 2008 Kaz Kojima Copyright (c) 2010, 2011, Cooperativa de Laboratorios Verosímiles , Copyright
de Inc. (c) 2019 Empresa de Microsoft.
Copyright (c) 2012 Alexandre K.
Copyright (c) 2011-2012 Tilera Corp.
Copyright (c) 2009-2012 BRAZO Ltd.
Copyright (c) 2013 Copyright de IBM (C) 2011 Kyle Moffett Copyright (c) 1998 Geoffrey Keating Copyright (c) 2013 La Palabra Escrita, Copyright
de Inc. (c) 2020 Madhavan T.
Venkataraman Licencia: Expat Comentario: Ve limas de fuente para detalles.
El libffi distribución de fuente contiene código seguro que no es separar de libffi, y es sólo utilizado tan utillaje para asistir con el edificio y probando de libffi.
Este código está distribuido con libffi para el propósito de comodidad sólo, y libffi es de ningún modo derivado de este código.
Comentario: FSF los cambios a esta lima son en el dominio público.
Limas: libtool-ldflags Copyright: (C) 2005 Software Libre Fundación, Porciones
de Inc. crearon por el Desarrollador Inicial es Copyright (C) 2009 el Desarrollador Inicial.
Todas licencias de Pitón, a diferencia del GPL, dejados distribuyes una versión modificada sin hacer vuestro código abierto de cambios.
Nada en este Acuerdo de Licencia será considerado para crear cualquier relación de agencia, sociedad, o aventura de junta entre PSF y Licensee.
Este Acuerdo de Licencia será regido por e interpretado en todos los respetos por la ley del Estado de California, excluyendo conflicto de provisiones de ley.
Nada en este Acuerdo de Licencia será considerado para crear cualquier relación de agencia, sociedad, o aventura de junta entre BeOpen y Licensee.
Copyright (c) 1991 - 1995, Stichting Mathematisch Centrum Amsterdam, El Netherlands.
Esta licencia aplica a todas las limas encontradas en tales envases, y cuáles no caen bajo su licencia explícita propia.
Nosotros específicamente permiso y fomentar la inclusión de este software, con o sin modificaciones, en productos comerciales.
El FreeType el proyecto es copyright (C) 1996-2000 por David Turner, Robert Wilhelm, y Werner Lemberg.
Estas afecciones aplican a cualquier software derivado de o basado en el FreeType Proyecto, no sólo el unmodified limas.
Si utilizas nuestra obra, nos tienes que reconocer.
Como no has firmado esta licencia, no eres requerido para aceptarlo.
Aun así, como el FreeType el proyecto es copyrighted material, sólo esta licencia, u otro contraído con los autores, te concedes el derecho de utilizar, distribuye, y modificarlo.
Habla aplicaciones y uso generales de FreeType, así como futuros y quiso adiciones a la biblioteca y distribución.
Está escrito en C, diseñado para ser pequeño, eficaz, altamente customizable, y portátil mientras capaz de producir alto-salida de calidad (glyph imágenes) de la mayoría de vector y bitmap formatos de fuente.
No olvida para enviar una explicación detallada del problema -- hay nada peor que recibiendo un terse mensaje que sólo dice 'no obra'.
El FreeType Equipo ---------------------------------------------------------------------- Copyright (C) 2006-2022 por David Turner, Robert Wilhelm, y Werner Lemberg.
El Desarrollador Inicial del Código Original es Alessandro Furieri.
Las porciones crearon por el Desarrollador Inicial es Copyright (C) 2011 el Desarrollador Inicial.
Titulares de copyright: Complacer no correo cualquiera de los autores listó aquí pidiendo preguntas sobre esta versión de GTK.
Copyright de cabo: 2004 Lorenzo Gil Sanchez Copyright: 2004 Morten Welinder Copyright: 2004 Paolo Borelli Copyright: 2004-2008 Canónico Ltd.
Con el tiempo, GTK ha incorporado algunas piezas de software qué empezado como proyectos independientes.
Demers Copyright (c) 1991-1996 por Xerox Empresa.
Copyright (c) 1996-1999 por Gráfico de Silicio.
Copyright (c) 1999-2003 por Hewlett-Packard Empresa.
El permiso es de ahora en adelante concedido para utilizar o copiar este programa para cualquier propósito, proporcionado el por encima de los avisos están retenidos encima todas las copias.
Hasta fin de 2012 libgcrypt el copyright estuvo poseído sólo por FSF, desde entonces contribuciones sin tarea de copyright al FSF ha sido integrado.
Copyright (C) 1994 X Consorcio Copyright (C) 1996 L.
Los cambios y el bug fija por todas partes el sitio.
El código marcado con ChangeLog entradas de g10 empleados de Código.
Copyright Peter Gutmann, Paul Kendall, y Chris Wedgwood 1996-1999.
La implementación del Camellia cipher ha sido sido tomado del original NTT proporcionado GPL fuente.
Lo distribuimos meramente para comodidad.
Tiene un permissive licencia y es copyrighted por atsec empresa de seguridad de la información.
Ver la lima para detalles.
Bernstein código de dominio público y tomado de Ortiga.
La documentación está autorizada bajo el GPLv2 (o más tardío), ve abajo.
Esta lima es parte de Libgcrypt.
Esta licencia rescinde para ti si demandas alguien sobre su implementacióndesoftware de fuente abierta de OCB alegando que tienes una patente que cubre su implementación.
Esta beca no incluye reclamaciones que sería infringed sólo como consecuencia de modificación más lejana de esta implementación.
Licencia: BSD-3-cláusula-parecido-Theodore-Ts Redistribución y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
Ninguna garantía o el mantenimiento está dado, tampoco expresado o implicó.
El buffers entonces puede ser scaled, composited, modificado, salvado, o rendered.
Licencia: BSD-Redistribuciónde4 Cláusulas y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
El envase estuvo adoptado de Ubuntu, con Thierry que es el original maintainer.
Ahora, Thierry acordó encima preparando él para acaecer un Debian Maintainer - yipee!
Cardona Dain Sundstrom Darren Middleman Davanum Srinivas David Blevins David Jencks Donald Bosque (dwoods) Erik B.
Gianny D'Amor Greg Wilkins Guillaume Nodet Hernan Cunico Hiram Chirino Jacek Laskowski James Strachan Jan Bartel Jarek Gawor furgoneta de Jason de Dillon de Jason Zyl Jason Warner Arrendajo D.
McHugh Jeff Genender Jeremy Boynes Joe Bohn John R.
Sisson Jules Gosnell Kevan el molinero Conoce Coar Lars Kuhne Lin Sol Manu George Mark DeLaFranier Mate R.
Hogstrom Paul McMahan Prasad Kashyap Rakesh Midha Rick McGuire Sachin P.
La misma licencia y el copyright aplica al Debian embalaje.
Proporciona estructura de dato que maneja para C, portabilidad wrappers, e interfaces para tal runtime funcionalidad como un bucle de caso, hilos, dinámicos cargando, y un sistema de objeto.
Todo las versiones más viejas no son apoyadas río arriba y puede contener bugs, algunos de los cuales pueden ser exploitable vulnerabilidades de seguridad.
Necesitarás crear una cuenta para tú.
Los bugs son para informar problemas en Simplistas él, no para pedir preguntas aproximadamente cómo para utilizarlo.
Otherwise, complacer incluir programa de prueba a escasa que pruebas el comportamiento.
Las limas excluyeron aquí no es actualmente necesitado para Simplista.
Licencia: Iconv-PD Esta lima está colocada en el dominio público.
Licencia: Mingw-PD Esta lima no tiene ningún copyright asignado y está colocado en el Dominio público.
Copyright (C) 1991-2000 Gráfico de Silicio, Inc.
no puedes utilizar esta lima exceptúa en conformidad con la Licencia.
El Código Original es Copyright (c) 1991-2000 Gráfico de Silicio, Copyright
de Inc. en cualesquier porciones creó por terceras fiestas es tan indicadas en otro lugar herein.
Copyright 1991, 1996, 1999, 2000, 2007 Software Libre Fundación, Inc.
Esta lima es parte del GNU MP Biblioteca.
Tendrías que haber recibido copia del GNU Licencia Pública General y el GNU Licencia Pública General Menor junto con el GNU MP Biblioteca.
Tiene un conjunto rico de funciones, y las funciones tienen una interfaz regular.
GNU MP Está diseñado para ser tan rápidamente tan posible, ambos para operandos pequeños y operandos enormes.
GNU MP Está creído para ser más rápido que cualquiera otra biblioteca similar.
Sus aumentos de ventaja con medidas de operando para operaciones seguras, desde GNU MP en muchos casos ha asymptotically algoritmos más rápidos.
Funciones de aritmética de entero firmadas (mpz).
Estas funciones están pretendidas para ser fáciles de utilizar, con su interfaz regular.
Por ahora, sólo un conjunto pequeño de las funciones necesarias para aritméticas racionales básicas.
Positivo-entero, duro-a-uso, muy abajo las funciones elevadas son en el mpn clase.
Ninguna gestión de memoria está actuada.
La visita tiene que asegurar bastante espacio es disponible para los resultados.
El conjunto de las funciones no es regulares, ni es la interfaz de llamar.
Casi todos los cálculos, en el envase entero, está hecho por llamar estas funcionesdenivel bajo.
Para más información encima cómo para utilizar GNU MP, complacer referir a la documentación.
Habrá parches para todos bugs serios sabidos allí.
Qué información está necesitada en un informe de bug útil está descrito en el manual.
Como tal, ha sido determinado no para cumplir el Debian Directrices de Software Libre, y no es embarcado en el debian envases.
Documentación y Código de Ejemplo ------------------------------ Tristemente, debido a autorizar el GMP la documentación es ya no embarcada en Debian.
El envase libgmp10-doc ahora contiene sólo demo código.
Comentario: Debian el envase está construido contra libunistring-dev envase.
Esto significa la configuración única es para añadir autorizó usuarios al 'plugdev' grupo.
El camlibs para cámaras (y motor) más viejo que 15 años han sido default discapacitados para instalación.
Todo de qué dice pertains al 0x2770:0x9050 cámaras, también, a no ser que algo al contrario está declarado abajo.
Su funcionalidad es muy básica.
En el envase dice que el cámara es capaz de tomar 20 fotos, pero de hecho el número de fotos es variable.
Para, son todos comprimió.
Desde el algoritmo de compresión es el mismo tan aquello en el 0x905C cámaras, este cámara es bastante utilizable, para qué es.
La resolución para esta cámara está fijada en 352x288 y no puede ser ajustado.
Para eliminar una foto con el eliminar botón en el cámara, prensa el botón.
Para eliminar todo, control él abajo más largo.
Al mejor de mi capacidad de determinar, el cámara tiene ninguna opción de clip, ninguna opción quedispararetrasada, y no multi-clips de marco pretendieron para AVI imágenes.
El programa ha sido escrito para mi placer y para ampliar y profundizar mi conocimiento de hardware de ordenador y software.
El programa no ha sido escrito con la expectativa inmediata de beneficio o beneficio financieros por mi parte, ni lo tiene sido encargado para paga.
Todo de qué dice pertains al 0x2770:0x9052 cámaras, también, a no ser que algo al contrario está declarado abajo.
El cámara único sabido para utilizar el ID 0x2770:0x9052 un Disney Pix Micro cámara.
Parece para ser un VGA versión del cámara más pequeño con el mismo nombre, el cual se informa como 0x2770:0x9050.
El cámara nuevo tiene los encuadres de resolución 640x480 y 320x240.
Ambos cámaras permiten deletion de todas las fotos.
Las mismas operaciones están utilizadas para aquel en cuanto a la captura de una imagen al ordenador (aquello es, el gphoto2 --captura-operación de preestreno).
El usuario es por tanto asesoró que el --captura-operación de preestreno también aclarará la memoria del cámara y sacar todas las imágenes almacenaron allí.
El cámara también ha kernel apoyo para modo de webcam.
Para correr el cámara como la webcam también eliminará todas las fotos quietas almacenaron en el cámara.
Esta característica no es presentar en el SQ905C cámaras y es una diferencia grande.
Debido a la manera este deletion está hecho, el funcionar cuál cuenta las fotos necesitaron un serios reescribe para acomodar el deletion.
La función de webcam se mantiene con el kernel.
Esta biblioteca de cámara en libgphoto2 apoyos stillcam funcionalidad.
Esto significa uno no tiene que preocupación sobre aquel pasando; también significa que no hay ninguna manera sabido para implementar el gphoto2 -D opción para estos cámaras.
Aparte de aspecto, la diferencia principal entre el Styleshot y el Suprema descrito encima es que el Styleshot tiene un interno rechargeable batería.
Estos cámaras toman 15 fotos en 256x256x24.
Tienen un 8Mbit memoria.
El ADC-65 tiene una sintaxis muy sencilla.
La motor sólo envía órdenesdeun bytes.
Si cualquiera otras órdenes son disponibles, tendrán que ser encontrados a través de experimentación.
Ahora mismo todo estoy utilizando es el colorspaceRGB estructura de dato, pero obrará encima utilizando este algún trucaje de imagen en el futuro.
Dos envases eran muy útiles, netpbm y el Gimp.
Por utilizar rawtopgm (de netpbm) era capaz a visually analizar el dato.
He también grabbed ideas muchísimas del dimera motor también.
De ahí, una biblioteca separada para apoyarlo.
El cámara hará 352x288 y 176x144 encuadres de resolución.
Alto-resolución y abajo-encuadres de resolución utilizan algoritmos de compresión diferente; no sólo es las fotosderesolución baja de dimensiones de píxel más pequeño, pero son también más altamente comprimió.
Todo streaming el vídeo y todo captan capacidades del uso de cámara transmisión de dato isócrono y así requerir apoyo de un kernel módulo.
El hardware no apoyará las opciones de captura de gphoto2.
El usuario tendría que ser consciente que acceso a este cámara a través de gphoto2 fallará si intentado con el spca50x kernel el módulo ya cargado.
En aquel caso el kernel el módulo ya habrá alegado el cámara.
Así, si tienes el kernel el módulo complace marca seguro no es instalado.
De hecho, esto no es exactamente cierto.
Para actuar estas operaciones, la motor de Ventanas utiliza un software de interpolación qué leyes como esto : Para calidad más baja, 640x480 los cuadros están descargados, y convertidos a 320x240.
En la misma manera, 80x60 thumbnails está generado.
Cuadros de calidad más baja quedan 640x480, y no thumbnail está proporcionado.
KBGear JamCam v2 Y v3 Esta motor está basada al protocolo inverso-engineered utilizando Portmon y sniffusb bajo Ventanas 98.
Además, Konica ha sido muy supportive por emitir su motor propia que explica la sintaxis de las órdenes.
Konica Incluso respondido a mis cuestiones y dio pistas adicionales.
Licencia ------- Esta biblioteca está liberada bajo los plazos del GNU Licencia Pública General.
Esto es la motor para largan lmini cámara.
Es todavía untested porque no tengo el cámara.
Esta motor descargará cuadros del LG T5100.
Aquí es cámara dirigido sólo características.
Copyright por Guillaume Bedot, 2005.
Esto es una motor fresca para el Minolta Dimage V cámara, el cual desde entonces ha sido interrumpido por Minolta.
Esta motor No contiene ningún código forma mis esfuerzos más tempranos.
Minolta Toma ninguna responsabilidad para la información me proporcionamos, el cual es perfectamente justo.
Muchísimo la información es en el código él, pero a veces el real spec es bueno así que los lectores pueden encontrar mis bugs.
Minolta Ha hecho aclara que no desean para liberar protocolos más lejanos, y recomendar que usuarios de unsupported los sistemas adquieren SmartMedia lectores para transferir imágenes.
Esta biblioteca dista mucho de completa.
Hay abundancia de sitios donde mejores sanity comprobando podría ser hecho.
Esto es, en mi opinión, preferible a perder el cuadro enteramente.
Si falla, el init la función todavía puede tener éxito; no creo que fallando para poner el reloj tendría que significar fallo de inicializar.
Por fin, el preestreno thumbnails finalmente obra!
Las distorsiones extrañas que ocurría anteriormente ha sido eliminado, y he sido capaz de recuperar cuidadoso thumbnails reliably para el últimas varias imágenes de centenar.
Más información en el formato de lima puede ser obtenida en el código él.
Eliminando todas las imágenes es ahora implementadas correctamente.
Esto bate iterar a través de todo de ellos, entrega abajo.
Implementa todos funcionan para descargar cuadros, vista su thumbnails o eliminarles.
Es también posible de tomar fotos con la biblioteca.
En el GUI de esta motor puedes seleccionar algunas preferencias para este.
Encima rs232 es posible de utilizar cada soportado Baudrate.
El Baudrate es seleccionable en el GUI.
Utiliza también el USB Interfave de Johannes Erdfeld.
Esto lo hace innecesario de tener un especial Kernelmodul para el Mustek.
Esto lo hace posible de reabrir el cámara después de un error, cuándo el cámara ha sido puesto a otro baudrate que 57k.
El GUI ahora utiliza ComboBoxes.
En Europa, estos modelos están sabidos como NV-DC1000 y NV-DC1580 respectivamente.
Para evitar confusión sencillamente escribimos DC1000 y DC1580.
Ambas bibliotecas están basadas en dc1000 utilidad, escrito por Fredrik Roubert y Galen Brooks.
A pesar de semejanzas en los dos protocolos allí son dos bibliotecas separadas, para DC1000 y DC1580 modelos respectivamente.
Del código de fuente de Michael McCormack Nikon CoolPix 600 biblioteca para gPhoto1 sigue que DC1580 y Nikon CP 600 uso el mismo protocolo.
Como de 28-th julio, no hay ningún informe si este Nikon obras de modelo o no con DC1580 biblioteca.
Durante libgphoto2, decimos que valores de regreso negativo son errores .
El CCD aparato qué capturas las imágenes de la lente es sólo 300K y así produce sólo cuadros de baja calidad.
Panasonic Proporcionado ninguna especificación para la creación de esta motor (a pesar de que una petición estuvo hecha).
El protocolo era inverso engineered utilizando ComLite32 bajo ventanas mientras utilizando el bundled Digitales PhotoShot aplicación.
Espero incluir con esta motor, en el futuro, un documento que esbozos el protocolo.
Estuvo implementado utilizando la información obtenida por husmear el usb autobús en Ventanas, desmontando la motor de ventanas dll es y algunos guesswork.
Es losely basado en el pccam600 camlib y contiene algún código de aquel.
Características -------- Lo actualmente apoya descargar de imágenes y eliminando todas las limas en el cámara.
Puede el cam les?
La funcionalidad mínima está implementada tan de la versión Experimental.
Imágenes crudas como recuperados del cámara requiere una cantidad no insignificante de tramitación de poste.
Visión de sonido autoriza el diseño a muchas empresas, por ello la variedad ancha de las marcas apoyadas por esta motor.
Residuos de Visión del sonido para liberar documentación, así que esta motor está basada enteramente en transaccionesdeUSB de ingeniería inversa.
Muchos gracias a Jeroen para esta obra, en qué este camlib está basado!
Esto es la motor para el toshiba pdr-m11 cámara.
No es el cámara más sumo, pero es bastante para mí.
Qué obras: puedo coger una lista de filenames, descarga jpeg thumbnails, y descargar todo archiva Qué no obra: Tiff thumbnails no obra.
Eliminando una lima sólo obra a veces.
La comunicación con el aparato pasa por emitir especial (hecho de encargo) scsi órdenes.
El SCB es más allá acolchado fuera con 0-s a 16 bytes.
Por ahora siguiendo el proyecto.
Tendrías que haber recibido una copia del GNU Licencia Pública General y GNU Licencia Pública General Menor junto con este programa.
Licencia: otro-2 Este software estuvo creado con la ayuda de la información propietaria que pertenece a StarDot Tecnologías .
Permiso para copiar y uso y modificar esta lima es concedió proporcionado el por encima de los avisos están retenidos, intactos.
Licencia: otro-3 Programadores pueden incorporar cualquiera o todo código a sus programas, dando crédito apropiado dentro de la fuente.
La publicación de las rutinas de fuente es permitted siempre y cuando el crédito apropiado está dado a Stephen Satchell, Satchell Evaluaciones y Echar Forsberg, Omen Tecnología.
Licencia: público-ámbito Mi contribución es de ahora en adelante colocada al dominio público.
Ninguna garantía está expresada o implicó.
Podría ser separado, pero como nadie más está utilizándolo, queda integrado al libgphoto2 envase.
Kargl, David Schultz, Bruce D.
La calidad del algoritmo es bien bastante para reconocimiento de altavoz fiable; incluso la música a menudo sobrevive transcoding en forma reconocible (dado las limitaciones de ancho de banda de 8 kHz tasa de muestreo).
Las interfaces ofrecieron es un fin de frente modelled después comprimir(1), y una biblioteca API.
Estuvo desarrollado de código publicado por personas quién cuidó para publicarlo antes de que podría ser monopolizado.
Aquella patente es más probablemente qué está confundiendo personas sobre el estado.
Estoy de acuerdo con Keith Moore que tendrían que ser registrados como idénticos, y espero que ellos ser registrados en el mismo documento para hacer que más claro.
La cita de prioridad de aquel uno es 22 Marcha 1985.
La práctica de quantizing residual exitation en LPC vocoders no fue novel en 1985.
Desde los plazos originales de hace 15 años quizás no hace nuestras intenciones completamente aclaran dadas hoy refined uso de los plazos legales, anexamos este permiso adicional: .
Este envase era debianized por David I.
Ofreciendo un conjunto completo de widgets, GTK es propio para los proyectos que varían de pequeños un-de proyectos para completar aplicación suites.
GTK Es parte y software libres del GNU Proyecto.
Si un fusionar la petición fija un asunto, la descripción tendría que mencionar el número de asunto.
Complacer gnomo de uso-keybinding-haciendas en vez de gtk-claves-tema-nombre en vuestro gtkrc.
El default comportamiento en más viejo Gtk las versiones era similares a Emacs, y quietos disponibles para usuarios para configurar.
Esto puede ser modificado con gconf-editor.
Esta excepción no aun así invalida cualquiera otras razones por qué el documento podría ser cubierto por el GNU Licencia Pública General.
Si modificas esta fuente, puedes extender esta excepción a vuestra versión de la fuente, pero no eres obligated para hacer tan.
Has obtenido este software de fuente tampoco directamente de Monotipia o del Unicode Consorcio.
Las fuentes, incluyendo cualesquier obras derivadas, puede ser bundled, embedded, y redistribuyó proporcionado los plazos de esta licencia están cumplidos.
Las fuentes y derivados, aun así, no puede ser liberado bajo cualquier otra licencia.
Ver el netcdf-copyright-lima de declaración añadió al Debian material para una declaración aproximadamente que por el HDF4 jefa de equipo.
El acceso y el uso de este software impondrán las obligaciones siguientes y comprensiones en el usuario.
Aquellas opciones pueden no cohexist para seguridad porque no C bibliotecas wrapper no es hilo-consciente.
Puedes utilizar sin incidentes sólo el C que ata en un multi-entorno de hilo.
En general, son también adelante compatibles en emisiones de mantenimiento de una emisión importante.
Ve abajo y comentarios de código de la fuente para detalles.
Cuándo utilizando Ortiga, tienes que comply plenamente con todas las afecciones de al menos uno de estas licencias.
Unos cuantos de las limas individuales están autorizadas debajo más permissive plazos, o en el dominio público.
Qué Original DES implementación, Colin Aploma Original MD5 implementación Peter Gutmann Original SHA1 implementación Andrew Kuchling Original MD2 implementación .
Autores de Ortiga (en aproximadamente orden cronológico de contribución inicial) .
Simon Josefsson Puerto de Arctwo, de GnuTLS y libgcrypt.
Puerto de Salsa20, basado en djb remisión.
Nikos Mavroyanopoulos GCM Implementación, RSA que ciega código, interfaz para general rsa-pkcs1 firmas.
Puerto de gosthash94 implementación de rhash.
Simo Sorce Lado-canal funciones de RSA silenciosa.
Mamone Tarsha Kurdi Powerpc64 Asamblea y complexión gorda setup, incluyendo AES y GCM.
Arm64 Asamblea y complexión gorda setup, incluyendo AES, Chacha, GCM, SHA1, SHA256.
Comentario: Este manpage estuvo copiado del lsh-utils envase.
Timshel No explícitamente seleccionar una licencia para su obra de embalaje, pero lo creo que puede ser consideró liberado bajo la misma licencia como LSH él.
Licencia: Redistribución y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
Si ves un número pequeño como 32 (las unidades son KB) entonces necesitarás aumentar este límite.
Cuándo la biblioteca está compilada en depurar el modo y ninguna lima está proporcionado la salida será escrita a stderr.
Nota: algunos del depurar las huellas son sólo disponibles cuándo la biblioteca está compilada en depurar modo.
El encima aviso de copyright y este aviso de permiso serán incluidos en todas las copias o porciones sustanciales del Software.
Puede ser utilizado como standalone la biblioteca o él pueden ser parcialmente o plenamente integrado a vuestra herramienta.
La biblioteca viene con un conjunto de herramientas de muestra construyó arriba de él y un sistema de prueba construido arriba de las herramientas de muestra.
Las muestras demuestran cómo para utilizar la biblioteca y puede servir como punto de partida para integrar la biblioteca a vuestra herramienta.
Esta licencia da plazos bajo qué limas del Programa pueden ser distribuidas y modificó.
Las limas individuales pueden tener constreñimientos más lejanos concretos encima modificación, pero ninguna lima tendría que tener restricciones encima distribución otro que aquellos especificaron abajo.
Si necesitas para modificar los plazos de distribución de algunas limas, no refiere a esta licencia, en cambio distribuir El Programa bajo una licencia diferente.
no hay ninguna garantía para El Programa, al alcance permitted por ley aplicable.
El riesgo entero como a la calidad y la actuación del programa es contigo.
La redistribución de limas sin cambios es dejó proporcionado que todas las limas que marca arriba de la distribución del Programa está distribuida.
Las limas individuales pueden aguantar afecciones adicionales qué supersede las afecciones generales encima la distribución y la modificación contenidas en esta lima.
Comandante 2009, 2011, 2015, 2023, D.
Comandante 2009, 2014-2015, 2020, D.
Comandante 2009-2012, 2015, 2022, D.
Comandante 2010, 2013-2014, 2017, 2019-2022, D.
Comandante 2010, 2016, 2018, D.
Comandante 2010, 2018, 2022, D.
Comandante 2011, 2014, 2016, 2019, 2022, D.
Comandante 2011, 2015, 2020, 2023, D.
Comandante 2011, 2016, 2019, D.
Comandante 2012, 2015, 2022, D.
Comandante 2013, 2016, 2022, D.
Comandante 2014, 2017, 2021-2022, D.
Comandante 2015, 2017-2018, 2021-2022, D.
Comandante 2017, 2019, 2021, D.
Comandante 2017, 2019, 2022, D.
Comandante 2017, 2019-2020, 2022, D.
Comandante 2009, 2016, 2020, D.
Comandante 2009-2014, 2016-2019, 2021, 2023, D.
Comandante 2009-2014, 2017-2019, 2022-2023, D.
Comandante 2009-2015, 2017, 2020-2021, 2023, D.
Comandante 2011, 2013, 2018, 2023, D.
Comandante 2011, 2013, 2023, D.
Comandante 2011-2012, 2014-2015, 2017, 2019, 2021-2023, D.
Comandante 2011-2012, 2014-2015, 2017-2018, 2023, D.
Comandante 2011-2013, 2016, 2020, D.
Comandante 2011-2013, 2017-2018, 2020-2021, 2023, D.
Comandante 2011-2015, 2018, 2020, 2023, D.
Comandante 2011-2015, 2018, 2022-2023, D.
Comandante 2014, 2017, 2023, D.
Comandante 2014-2015, 2018, 2020, D.
Comandante 2016-2017, Loongson Empresa de Tecnología Limitó, Beijing 2016-2018, Loongson Empresa de Tecnología Limitó, Beijing 2018-2019, D.
Comandante 2015, 2018, 2021-2022, D.
Comandante 2016-2017, Loongson Empresa de Tecnología Limitó, Beijing 2016-2018, Loongson Empresa de Tecnología Limitó, Beijing 2019, D.
Comandante 2010, 2015-2020, 2022, D.
Comandante 2010, 2016, 2018, 2022, D.
Comandante 2010-2011, 2013-2017, 2019-2020, 2022, D.
Comandante 2009-2011, 2014, 2016, 2018, 2022, D.
Comandante 2009-2011, 2014-2016, 2018, 2022, D.
Licencia de comandante: BSD-Comentariode3 cláusulas: Generó limas.
Asumiendo licencia en cuanto al Java limas.
Comandante 2010, 2015, 2022, D.
Comandante 2010, 2014, 2017, 2019-2022, D.
Comandante 2010, 2017, 2021-2022, D.
Lane 2015, 2017, 2022, D.
Comandante 2011, 2014, 2022, D.
Comandante 2009, 2011-2012, 2014-2015, D.
Comandante 2009-2011, 2014-2017, 2019, D.
Comandante 2010-2011, 2015-2016, 2021, D.
Domenichelli 2014, Rolf Eike Cerveza 2015, Alex Turbov 2016, 2019, D.
Lane 1996-1997, Agner Niebla 2009-2011, 2014-2016, 2018-2022, D.
Comandante 2013, Linaro Limitó 2015, Google, Comandante
de Inc. 2015, 2020, Google, Inc.
Este software es copyright (C) 1991-2010, Thomas G.
Por participar, estás esperado a uphold este código.
Repackaged: Evita no-libre o minified limas, y copias de código de la comodidad.
Aun así, choca con libjson C biblioteca.
En resumen, JsonCpp está autorizado bajo el MIT licencia, o dominio público si deseado y reconocido en vuestra jurisdicción.
El autor (Baptiste Lepilleur) explícitamente disclaims copyright en todas las jurisdicciones qué reconocer tal descargo de responsabilidad.
Sobre el pasado veinte años, he sido implicado en docenas de proyectosdefuente abierta, algunos de mi creación propia, algunos como colaboradores menores.
Hacemos esta dedicación para el beneficio del público en grande y en detrimento de nuestros herederos y sucesores.
Pretendemos esta dedicación para ser un overt ley de relinquishment en perpetuidad de todos derechos presentes y futuros a este código debajo ley de copyright.
Para la evitación de duda: .
La licencia concedida en Sección 3 encima es expressly hecho subject a y limitado por las restricciones siguientes: .
No puedes ofrecer o imponer cualesquier plazos en la Obra que altera o restringir los plazos de esta Licencia o el recipients' el ejercicio de los derechos concedió hereunder.
La motivación primaria para el tenedor es la carencia de alternativas al libkml biblioteca.
El desarrollo del libkml el proyecto ha sido dejado de lado por Google sin cualquier razón públicamente declarada tan lejos.
Debido a aquella la decisión estuvo hecha para intentar a revitalize el libkml proyecto con un tenedor en GitHub.
Esta versión de ioapi está diseñado para acceder memoria más que limas.
Utilizamos una región de memoria para poner dato en a y tomar él fuera de.
No tenemos queextiendencoche buffers y no informa cualquiera más que el dato ha sido escrito.
Es realmente pretendido para acceder un archivo de cremallera embedded en una aplicación tal que puedo escribir un instalador sin limas externas.
Copyright (C) 1998-2003 Gilles Vollant (C) 2003 Justin Fletcher .
Esta lima es bajo la misma licencia como el Unzip herramienta está distribuido con.
Para utilizar Kerberos contraseñas para autentificación local y obtener Kerberos credentials automáticamente cuándo logging en, instala y configurar libpam-krb5.
A registro encima a otros sistemas que utilizan Kerberos autentificación, más los sitios encontrarán un Kerberos-habilitó sshd el más conveniente.
Algunos sitios en cambio preferirán utilizar Kerberos-habilitó versiones del Unix estándar login utilidades (rsh, rlogin, telnet, ftp).
Los clientes son disponibles en el krb5-envase de clientes y los servidores son disponibles en el krb5-rsh-servidor, krb5-telnetd, y krb5-ftpd envases.
Para más flexible login apoyo, uso Kerberos-habilitó ssh en cambio.
El krb5-kdc y krb5-admin-envases de servidor son sólo necesitados y utilizados en Kerberos KDCs, sólo uno puesto del cual está necesitado para cada independientemente dirigido Kerberos reino.
Documentación Todo Kerberos binaries y la mayoría de limas de configuración tienen páginas manuales.
Para el info páginas y manual de remisión, instala krb5-doc.
En el futuro, krb5-kdc puede cambiar para utilizar db4, a pesar de que haciendo así que hará upgrades un poco difícil.
Ninguno de los clientes de muestra y los servidores están instalados.
Como regla general, estos no son útiles a no ser que estás haciendo desarrollo, y en tal situación probablemente les quieres construir de fuente.
Nota que por default, ningún unencrypted los servicios están habilitados.
En este día y edad, no encriptando tráfico de red es una manera buena de coger atacado.
Si instalado, krb5-rsh-servidor por default deja cualquier usuario en el reino local cuyos partidos principales un nombre de cuenta local a registro encima a aquella cuenta.
Ver el klogind y kshd páginas de hombre.
No confía en otro cryptographic biblioteca.
Documentación ------------- Un estándar info manual de remisión del formato está incluido.
Río arriba Autores: g10 Código GmbH y Fabio Fiorina.
Este software es copyright (C) 1991-2013, Thomas G.
Copyright de porciones 1998-2013 Kurt D.
Copyright de porciones 1998-2006 Neto Booleano Incorporó.
Copyright de porciones 2001-2006 Empresa de IBM.
Copyright de porciones 1999-2008 Symas Empresa.
Copyright de porciones 1998-2003 Hallvard B.
Copyright de porciones 2007-2011 Gavin Henry.
Copyright de porciones 2007-2011 Suretec Sistemas Ltd.
Copyright de porciones (c) 1992-1996 Regents de la Universidad de Míchigan.
Copyright (C) 2004-2015 Software Libre Fundación, Copyright
de Inc. (C) 2010-2015 Software Libre Fundación, Inc.
Tan, en esta situación, no hay ningún requisito que vuestro envase él está autorizado bajo el GNU Licencia Pública General para aprovechar GNU shtool.
Copyright de porciones 2003 Kurt D.
Copyright de porciones 2003 Empresa de IBM.
Copyright de porciones 1998-2003 Kurt D.
Copyright de porciones 1998-2001 Neto Booleano Incorporó.
Copyright de porciones 2002, F5 Redes, Inc, Todos los derechos reservaron.
Copyright de porciones 2006 Howard Chu.
Copyright de porciones 2001-2003 Empresa de IBM.
Copyright de porciones 1999, Juan C.
Copyright de porciones 2008 Pierangelo Masarati, SysNet Copyright de Porciones (c) 1992-1996 Regents de la Universidad de Míchigan.
Copyright de porciones 2010 Kurt D.
Copyright (C) 1992-1996, 1998-2012 Software Libre Fundación, Copyright
de Inc. (C) 2012 Software Libre Fundación, Copyright
de Inc. (C) 2014 Software Libre Fundación, Copyright
de Inc. (C) 1996-2001, 2003-2015 Software Libre Fundación, Peticiones
de Inc. para permiso pueden ser enviadas a NeoSoft Inc, 1770 St.
James Sitio, Suite 500, Houston, TX, 77056.
Copyright de porciones (C) 2004 Virginia Tecnología, David Hawes.
Copyright de porciones 2009 Howard Chu.
Copyright de porciones 2004-2022 por Howard Chu, Symas Corp.
Copyright de porciones 2008 por Howard Chu, Symas Corp.
Copyright de porciones 2013 por Ted C.
Copyright de porciones 2015 por Howard Chu, Symas Corp.
Copyright (c) 1989 Regents de la Universidad de California.
Copyright de porciones 2005 por Howard Chu, Symas Corp.
Copyright de porciones 2008 Pierangelo Masarati.
Copyright 2004 Howard Chu, Symas Corp.
Copyright de porciones 2004-2005 por Howard Chu, Symas Corp.
Copyright de porciones 2004 Hallvard B.
Copyright de porciones 2004-2017 Howard Chu, Symas Empresa.
Copyright de porciones 2016 Symas Empresa.
Copyright 2009-2018 Howard Chu Todos los Derechos Reservaron.
Copyright 2009 Symas Empresa Todos los Derechos Reservaron.
Copyright de porciones 1997,2002,2003 Empresa de IBM.
Copyright de porciones 2000-2003 Pierangelo Masarati.
Copyright (C) 2000 Novell, Copyright
de Porciones del Inc. (c) 1987 Regents de la Universidad de California.
Copyright de porciones (c) 1993 Regents de la Universidad de Míchigan.
Copyright de porciones 1995 Empresa de IBM.
Copyright (c) 1996, 1998 por Consorcio de Software del Internet.
Copyright (c) 1990, 1994 Regents de la Universidad de Míchigan.
Copyright de porciones (c) 1992, 1993 Regents de la Universidad de Míchigan.
Copyright de porciones 2000-2003 Kurt D.
Copyright de porciones (C) 1999, 2000 Novell, Copyright
de Porciones del Inc. (c) 1990 Regents de la Universidad de Míchigan.
Copyright de porciones (c) 1995 Regents de la Universidad de Míchigan.
Copyright de porciones 2018 Howard Chu.
Copyright de porciones 1999 Lars Uffmann.
Copyright de porciones 2004 Hewlett-Packard Empresa.
Copyright de porciones 2004 Howard Chu, Symas Corp.
Copyright (C) 1999, 2000 Novell, Copyright
de Porciones del Inc. 1999-2003 Howard Chu.
Copyright de porciones 2001-2003 Pierangelo Masarati.
Copyright de porciones 1999 John C.
Copyright de porciones 2002 myinternet Limitó.
Copyright de porciones 2004 Pierangelo Masarati.
Copyright de porciones 1999 Dmitry Kovalev.
Copyright de porciones 2002 Pierangelo Masarati.
Copyright de porciones 2004 Mark Adamson.
Copyright de porciones 2007 por Howard Chu, Symas Empresa.
Copyright de porciones 2003 por Empresa de IBM.
Copyright de porciones 2003-2008 por Howard Chu, Symas Empresa.
Copyright de porciones 2000 Marca Adamson, Carnegie Mellon.
Copyright de porciones 1999 PM Lashley.
Copyright de porciones 2004-2005 Pierangelo Masarati.
Copyright de porciones 2008 Emmanuel Dreyfus.
Copyright de porciones 2004,2006-2007 Symas Empresa.
Copyright de porciones 2005-2008 Pierangelo Masarati.
Copyright 2003-2018 por Howard Chu.
Copyright 2004-2005 Howard Chu, Symas Empresa.
Copyright de porciones 2008 Sombrero Rojo, Redistribución
de Inc. y uso en la fuente y las formas binarias son permitted sin restricción o coste de cualquier amables mientras este aviso está preservado.
Comentario: El siguiente es información adicional de Juan C.
Gomez Encima cómo esta licencia es para ser interpretado: .
Estás dado la bienvenida a a vuestras opiniones.
La Fundación No ve ninguna razón para él a expend su limitó recursos buscando aclaraciones qué cree es innecesario.
Eres, naturalmente, dado la bienvenida a a expend el tiempo y la energía que buscan aclaraciones piensas es necesario.
Licencia: BSD-3-cláusula-Redistribución de California y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
Licencia: BSD-4-cláusula-Redistribución de California y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
Esto es GNU libltdl, un sistema independiente dlopen wrapper para GNU libtool.
Escrito por Thomas Tanner, 1999 Esta lima es parte de GNU Libtool.
Licencia: BSD-Redistribuciónde3 cláusulas y uso en fuente y formas binarias, con o sin modifica- tion, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
Documentación para liblzma El liblzma API los encabezamientos incluyen cortos docs sobre cada función y tipo de dato como Doxygen etiquetas.
Estos docs tendría que ser bastante VALE como remisión rápida.
He planeado escribir un ramo de muy ejemplo documentado bien programas, qué (debido a comentarios) tendría que obrar como preceptoral a varias características de liblzma.
No tales programas de ejemplo han sido escritos todavía.
Esta lima describe el envase de fuente.
Los envases binarios contienen algunos archiva derivados de otras obras: por ejemplo, imágenes en el API la documentación proviene Doxygen.
Licencia: las licencias Diferentes aplican a limas diferentes en este envase.
Puedes hacer cualquier quieres con el archiva aquello ha sido puesto al dominio público.
Si encuentras el dominio público legalmente problemático, tomar la frase anterior como beca de licencia.
Si tienes cuestiones, no duda para pedir el autor(s) para más información.
Puedes hacer cualquier quieres con esta lima.
Licencia: ninguno Ningún copyright para autorizar.
Son libremente distributable aun así, pero es mejor de ser prudente y evitar incluyendo cualquier copyrighted piezas en las limas de prueba.
Las limas nuevas son sólo objeto compilado y reunido limas, y así no contiene cualquier copyrighted código.
Licencia: noderivs Todo el mundo es permitted para copiar y distribuir verbatim copias de este documento de licencia, pero cambiando no es dejado.
Puedes libremente uso, modifica, distribuye, y relicense les.
Licencia: GPL-2 Permiso para utilizar, copia, modifica, y distribuir este software y su documentación bajo los plazos del GNU la licencia Pública General es de ahora en adelante concedió.
Ninguna representación está hecha sobre la conveniencia de este software para cualquier propósito.
Licencia: permissive-nowarranty Copiando y distribución de esta lima, con o sin modificación, es permitted en cualquier medio sin realeza proporcionó el aviso de copyright y este aviso están preservados.
Los ejemplos que uso stdin o stdout no pone stdin y stdout a modo binario.
Windows) es posible que los ejemplos no obrarán sin modificación.
El libmagic la biblioteca puede coche-detectar incorrecto endianness y mango que situación agraciadamente, en una actuación significativa cuesta aun así.
La mano modificó para reducir redundancia en la salida y añadir texto de licencia apropiada.
Licencia: unlimited-libre-doc Esta lima es documentación libre ; la Fundación de Software Libre da unlimited permiso para copiar, distribuye y modificarlo.
Permiso para utilizar o copiar este software para cualquier propósito es de ahora en adelante concedido sin coste, proporcionado el por encima de los avisos están retenidos encima todas las copias.
La Licencia de Fin: público-ámbito La obra es dominio público (ninguna licencia).
Licencia: BSD-3-cláusula-Aaron-D-Gifford Redistribución y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
Este código está derivado del software contribuyó al NetBSD Fundación por Andrew Brown.
Miller Licencia: público-ámbito-md4 Este código implementa el MD4 mensaje-digerir algoritmo.
Miller modificó el MD5 código para hacer MD4 basado en RFC 1186.
Tendrías que haber recibido una copia del GNU Biblioteca Licencia Pública General junto con este programa.
Copyright 2000-2023 Software Libre Fundación, Copyright
de Inc. 2000, 2001, 2002, 2003, 2004, 2005, 2006, 2007, 2008, 2009, 2010, 2011, 2012, 2013, 2014, 2015, 2016, 2017, 2018 Software Libre Fundación, Inc.
Los casos puestos a mtdev puede ser de cualquier MT aparato, específicamente escribir Un sin contacta seguir, tipo Un con contacta seguir, o escribir B con contacta seguir.
No acepto ninguna responsabilidad para cualquier daño o pérdida de empresarial que este software puede causar.
Johnson, Jiahao Chen, Peter Colberg, Tony Kelman, Scott P.
En más contextos, necesitas más del básico cryptographic algoritmos, también necesitas alguna manera de mantener pista de algoritmos disponibles, sus haciendas y variantes.
A menudo tienes algún proceso de selección del algoritmo, a menudo dictado por un protocolo quieres implementar.
Y aquello es por qué hay tantos diferente cryptographic bibliotecas alrededor.
La ortiga intenta evitar este problema por hacer una cosa, el bajo-nivelar crypto material, y proporcionando un sencillo pero interfaz general a él.
En particular, Ortiga no selección de algoritmo.
Él no asignación de memoria.
La idea es que uno puede construir varias aplicación y contexto interfaces concretas arriba de Ortiga, y compartir el código, casos de prueba, benchmarks, documentación, etc.
los ejemplos son el módulo de Ortiga para la lengua de Pica, y LSH, el cual ambos uso un objeto-abstracción orientada arriba de la biblioteca.
Utilizando GNU la marca es fuertemente recomendada.
Correo me si tienes cualesquier cuestiones o sugerencias.
Puedes querer suscribir a la ortiga-bugs mailing lista.
Licencia: todo-permissive Copiando y distribución de esta lima, con o sin modificación, es permitted en cualquier medio sin realeza proporcionó el aviso de copyright y este aviso están preservados.
Tampoco el nombre de Texas Instruments Incorporó ni los nombres de sus colaboradores pueden soler endosar o promover los productos derivaron de este software sin permiso escrito previo concreto.
Java pre-Compilado binaries es también sacó.
Licencia: BSD-4-cláusula-UC Copyright (c) 1994-1997 Regents de la Universidad de California.
Licencia: permissive-configurar Limas: compila depcomp prueba desaparecida-Copyright de motor: 1999-2017 Software Libre Fundación, Licencia
de Inc.: permissive-configurar Esto configura el guión es software libre ; la Fundación de Software Libre da unlimited permiso para copiar, distribuye y modificarlo.
Licencia: permissive-fsf Copiando y distribución de esta lima, con o sin modificación, es permitted en cualquier medio sin realeza proporcionó el aviso de copyright y este aviso están preservados.
Es en el dominio público.
Las fuentes están proporcionadas para libres pero sin garantía de cualquier clase.
Si redistribuyes modificó fuentes, apreciaríamos que incluyes en la lima ChangeLog información de historia que documenta vuestros cambios.
Complacer leído el FAQ para más información en la distribución de versiones de fuente modificada.
Licencia: BSD-3 Copyright (c) 1991, 1993, 1994 El Regents de la Universidad de California.
Mayo compartes libremente, nunca tomando más de das.
La redistribución de las porciones de este programa están controladas por el GNU Licencia Pública General Menor como publicado por la Fundación de Software Libre.
Como es algunos las limas problemáticas sólo utilizadas en Ventanas.
Una implementación de dominio público de BSD rutinas de directorio para MS-DOS.
Su majestad la reina en Derecho de Canadá no hace ninguna representación sobre la conveniencia de este software para cualquier propósito.
Mapeo e imaginería nacionales Agencia.
Copyright (c) 2003-2017 Universidad de Illinois en Urbana-Champaign.
Licencia: BSD-Comentariode3 Cláusulas: La patente narrada ha expirado.
Esto es software libre , autorizó debajo: .
El (tres-cláusula) BSD Licencia .
Biblioteca nacional de Medicina, Bethesda, MD.
Si utilizas este código de fuente en un producto, acknowledgment no es requerido pero sería apreciado.
Licencia: GNU-Todo-Permissive-Autoriza Copiar y distribución de esta lima, con o sin modificación, es permitted en cualquier medio sin realeza proporcionó el aviso de copyright y este aviso están preservados.
Esta excepción especial al GPL aplica a versiones del Autoconf Macro liberados por el GNU Autoconf Macro Archivo.
Los nombres de sus colaboradores no pueden soler endosar o promover los productos derivaron de este software sin permiso escrito previo concreto.
Comentario: Este código está derivado del software contribuyó a Berkeley por Chris Torek.
Copyright (C) 1996-1999, 2000-2003, 2005 Andrew G.
Yuriev Copyright (C) 1996 Elliot Lee Copyright (C) 1997 Philip W.
Redistribución y uso en fuente y formas binarias de Linux-PAM, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
El guión está apuntado en Debian distribuciones de Linux basado así que los nombres de envase y la disponibilidad podrían diferir en otras distribuciones.
Puedes correr controles adicionales después de instalar por ejecutar marca xtests tan raíz.
Copia de seguridad todo dato importante antes de que!
PAM Para Debian -------------- PAM (Pluggable Módulos de Autentificación) proporciona administradores de sistema con un método poderoso de controlar acceso de sistema y métodos de autentificación.
Pango Formas el núcleo del texto y la fuente que manejan para GTK.
Pango Está diseñado para ser modular; el núcleo Pango el diseño puede ser utilizado con fuente diferente backends.
El Cairo backend es el prefirió backend para utilizar Pango con y es subject de la mayoría del desarrollo en el futuro.
Tiene la ventaja que el mismo código puede ser utilizado para exposición e imprenta.
Sugerimos utilizar Pango con Cairo como describió encima, pero puedes también X-concreto rendering utilizando el Xft biblioteca.
El Xft backend versión de usos 2 del Xft biblioteca para dirigir fuentes de lado del cliente.
Necesitarás el libXft envase, y posiblemente el libXrender y renderext envases también.
Licencia: Permiso de Ejemplo para utilizar, copia, modifica, distribuye, y vender este ejemplo para cualquier propósito es de ahora en adelante concedido sin coste.
El aviso de licencia (como visto en el campo de Encabezamiento de Licencia Estándar abajo) declara cuál de estos aplica el código en la lima.
Todas las marcas y registró las marcas mencionaron herein es la hacienda de sus dueños respectivos.
Copyright 2009, 2012 Sombrero Rojo, Inc.
La segunda afección en el BSD licencia (cubriendo redistribuciones binarias) no aplica hasta abajo una cadena de software.
Río arriba está esperando caer apoyo para pcre3 en un futuro próximo.
Esto está requerido tan no chocan con los en libc.
Las funciones de biblioteca básicas están escritas en C y es freestanding.
Copyright (c) 1997-2007 Universidad de Cambridge Todos los derechos reservaron.
Copyright (c) 2007, Inc. de Google
está asumido que todo las otras limas son parte de Perl y compartir el encima copyright e información de licencia a no ser que explícitamente especificados de manera diferente.
Copyright (C) 1991, 1992, 1993, 1994, 1995, 1996, 1997, 1998, 1999, 2000, 2001, 2002, 2003, 2004, 2005, 2006, 2007, 2008 por Larry Muro y otros .
Licencia: Unicode Comentario: La licencia está dada como .
Está asumido que el código de prueba está autorizado bajo los mismos plazos como Perl.
Está asumido que están autorizados bajo los mismos plazos como Perl él.
Lo puedes distribuir debajo los mismos plazos como Perl él.
Copyright 1990-1992 Dato de RSA Seguridad, Copyright
de Inc. (c) 2011-2014 Reini Urbano.
Copyright (c) 2014-2017 cPanel Copyright
de Inc. (c) 1999 Tuomas J.
Copyright (C) 2004, 2008 Matthijs furgoneta Duin.
Copyright (C) 2014 cPanel Inc.
puedes copiar y distribuir este programa bajo los mismos plazos como Perl él.
Las mesas y algunos del código que utilizado para ser aquí estuvo tomado prestado de metamail, el cual viene con este mensaje: .
Copyright (c) 2010-2011 Trucha Mate y David Dorado.
Copyright (C) 2015, 2020 Steve Heno.
El aviso de licencia en el documento es: .
Cuándo incluido como una parte integrada de la Distribución Estándar de Perl o de su documentación (imprimido u otherwise), estas obras está cubierta bajo Perl Licencia Artística.
Irrespective De su distribución, todos ejemplos de código aquí son en el dominio público.
Eres permitted y fomentado para utilizar este código y cualesquier derivados del mismo en vuestros programas propios para divertidos o para beneficio como ves cabido.
Este documento es disponible bajo los mismos plazos como Perl él.
Ejemplos de código en todo el perlfaq los documentos son en el dominio público.
Les utiliza tan ves cabido (y en vuestro riesgo propio sin garantía de cualquiera).
Copyright (c) 2001-2016 por Marek Rouchal.
Copyright de porciones 2006-2008 Adam Kennedy.
De ahí, aquellos separa G de Michael del Copyright Schwern 2001.
Irrespective De su distribución, todos ejemplos de código en estas limas son de ahora en adelante colocados al dominio público.
Eres permitted y fomentado para utilizar este código en vuestros programas propios para divertidos o para beneficio como ves cabido.
Un comentario sencillo en el código que da el crédito sería courteous pero no es requerido.
Copyright (c) 1999,2001 por ZeeGee Copyright de
Inc. del Software (C) 2009 Adam Kennedy.
Copyright (C) 2015 Steve Heno.
Copyright (C) 2005 Aristóteles Pagaltzis Copyright (C) 2012-2013 Google, Inc.
está asumido que las otras partes están autorizadas bajo los mismos plazos como el resto de la distribución.
Desarrollado por ActiveWare Internet Corp.
Copyright (c) 2012-2020 Ken Williams.
Basado en el ExtUtils::xsubpp código por Larry Muro y el Perl 5 Porteros, el cual estuvo liberado bajo los mismos plazos de licencia.
Este módulo está distribuido bajo los mismos plazos como Perl él.
Siente libre de utilizar, modifica y redistribuirlo mientras retienes la atribución correcta.
Copyright (c) 2016, cPanel Copyright
de Inc. (c) 2012, Steve Peters.
Copyright (c) 2002-2003, Rob Brown.
Copyright (c) 2001, Colin McMillen.
Copyright (c) 2003 Constantin S.
Porciones del C código en esta biblioteca es copyright (c) 1994 por el Regents de la Universidad de California.
Copyright (c) 2011 Mark Allen.
Copyright (c) 2011 brian d foy.
Copyright (c) 2017 Mark Allen.
Copyright (c) 2001-2002 Michael G.
Copyright (c) 2002-2004 Sean M.
Copyright (c) 2002-2010 Jarkko Hietaniemi.
Está asumido que esta distribución está autorizada bajo los mismos plazos como Perl él.
Está asumido que está autorizado bajo los mismos plazos como Perl él.
Este código está derivado del software contribuyó a Berkeley por Guido furgoneta Rossum.
Un comentario sencillo en el código que da crédito al FAQ sería courteous pero no es requerido.
Ver el individual perlfaq documentos para información de copyright adicional.
Copyright (c) 2000, 1996, 1991, 2012 O'Reilly Medios de comunicación, Inc.
Las limas diferentes tienen avisos de copyright separado, recogió encima.
Además vuestros cambios, si cualquiera, tiene que ser claramente marcado como tal.
Está asumido que otros colaboradores han colocado sus contribuciones bajo una licencia compatible.
Eres siempre permitted para hacer los arreglos completamente exteriores de esta licencia directamente con el Titular de Copyright de un Envase dado.
Tales instrucciones tienen que ser válidas en el tiempo de vuestra distribución.
Si estas instrucciones, en cualquier tiempo mientras estás llevando fuera de tal distribución, inválido acaecido, tienes que proporcionar instrucciones nuevas encima demanda o cesar distribución más lejana.
Costes de distribuidor son permitted, y autorizando costes para otros componentes en la agregación son permitted.
Por utilizar, modificando o distribuyendo el Envase, aceptas esta licencia.
Licencia: BSD-3-cláusula-con-Redistribución y uso quenumeranextraños en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
El entero sdbm envase de biblioteca, como authored por mí, Ozan S.
Yigit, es de ahora en adelante colocado en el dominio público.
Como tal, el autor no es responsable para las consecuencias de uso de este software, ningún asunto cómo terrible, incluso si surgen de defectos en él.
Desde el sdbm envase de biblioteca es en el dominio público, esta emisión original o cualesquier emisionesdeámbito público adicionales del original modificado puede no posiblemente (por definición) ser withheld de ti.
Nota que mero excerpts por ellos (con la excepción de código de fuente cruda) no es obras derivadas consideradas bajo esta licencia.
El uso y la redistribución está limitado a las afecciones siguientes: .
Uno no puede atribuir cualquier contenido derivado a los autores no implicados en la creación del contenido, aunque una atribución al autor no es necesario.
Redistribución y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: .
Licencia: BSD-3-cláusula e iSC Licencia: BSD-Redistribuciónde3 cláusulas y uso en fuente y formas binarias, con o sin modificación, es permitted proporcionado que las afecciones siguientes están cumplidas: 1.
El siguiente es el MIT licencia, acordado a por más colaboradores.
Titulares de copyright de código nuevo tendrían que utilizar esta declaración de licencia donde posible.
Las redistribuciones de código de fuente tienen que retener declaraciones de copyright y avisos.
Copyright (c) 2002-2003 La Fundación de Software del apache.
Este software consta de las contribuciones voluntarias hicieron por muchas personaje en behalf de la Fundación de Software del apache.
Licencia: Público-Ámbito Esta clase es dominio público (no copyrighted).
Licencia: BSD-Indiana de Indiana Extremo Universitario!
Todo los materiales publicitarios que mencionan las características o el uso de este software tienen que mostrar el siguientes acknowledgment: .
Permiso para utilizar, copia, modifica, y distribuir estas imágenes para cualquier propósito y sin el coste es de ahora en adelante concedió.
Copyright (c) 1998 Sol Microsystems, Copyright
de Inc. (c) 1998, 1999 por Scriptics Empresa.
El autor no es responsable para pérdida o avería que puede resultar de su uso.
Copyright (C) 2001 I'O, Todos los Derechos Reservaron.
Copyright (C) 2006 Proyecto X0213, Todos los Derechos Reservaron.
Licencia: Hecho de encargo-Unicode Te puede utilizar, modifica, distribuir esta mesa libremente.
La licencia de Perl es: .
Esto incluye proyecciones cartográficas así como geodetic transformaciones.
Aunque he puesto mi nombre propio como titular de copyright, no significo para implicar yo la obra.
Esencialmente toda obra estuvo hecha por Gerald Evenden.
Los detalles pertenecientes al sistema de coordenada ha sido emisión en el dominio público (ve remisiones encima).
Escrito por: Knud Poder y Karsten Engsager .
Modificado y utilizó aquí por permiso de Reparto de Redes de la Remisión, Kort og Matrikelstyrelsen (KMS), Copenhague, Copyright de Dinamarca: 2008, Gerald I.
Licencia: Público-Ámbito El autor explícitamente disclaims copyright en todas las jurisdicciones qué reconocer tal descargo de responsabilidad.
En tales jurisdicciones, este software está liberado al Dominio público.
Comentario: el código generado por el Protocolo Buffer el compilador está poseído por el dueño de la lima de entrada utilizada cuándo generándolo.
Este código no es standalone y requiere una biblioteca de apoyo para ser enlazado con él.
Esta biblioteca de apoyo se es cubierto por el encima licencia.
Ver las secciones próximas para el razonamiento y detalles de implementación.
Desde entonces, el caso último estuvo encontrado para tener un asunto de diseño fundamental.
Por ejemplo: - FreeBSD y derivados - OpenBSD - usos una copia fuertemente parchada de pthread-colillas a workaround esto - otro BSD programa ?
Clang: Aarch64, BRAZO, x86 y probablemente otros.
Como de Solaris 10 (más viejo actualmente versión soportada) todo el pthread API vidas en libc.
Con diseño anterior, uno podría coger mismatched llamadas al pthreads API.
La cantidad y la severidad de asuntos dependen en un número de factores.
En cualesquier cosas de caso van horribly mal más pronto en más tardíos.
Los símbolos ----------- La lista siguiente de símbolos está tomada del libc proporcionado por GLibC.
Está considerado suficiente y razonablemente cuidadoso de qué el 'ligero' pthread los símbolos son, desde GLibC es uno del pocos (el únicos) implementaciones qué tiene la ruptura distinta.
Guido queda el autor principal de la pitón, a pesar de que incluye muchas contribuciones de otros.
Zope La empresa es una miembro de patrocinar del PSF.
Históricamente, la mayoría, pero no todo, emisiones de Pitón también han sido GPL-compatibles; la mesa bajo summarizes las varias emisiones.
Gracias a los muchos voluntarios exteriores quiénes han obrado debajo la dirección para hacer de Guido estos libera posibles.
Por copiar, instalando u otherwise utilizando Pitón, Licensee apalabra ser atado por los plazos y afecciones de este Acuerdo de Licencia.
Por copiar, instalando u otherwise utilizando el software, Licensee apalabra ser atado por los plazos y afecciones de este Acuerdo de Licencia.
Licencia: El texto siguiente incluye la licencia de Pitón y licencias y acknowledgements para software incorporado.
Licencias para las limas no autorizadas bajo las Licencias de Pitón están encontradas al final de esta lima.
Coded Por Takuji Nishimura y Makoto Matsumoto.
