
G
xPlaceholder*(
shape:ÿÿÿÿÿÿÿÿÿ*
dtype0
›
,zoo_maxpooling3d_1/max_pooling3d_1/MaxPool3D	MaxPool3Dx*
ksize	
*
data_formatNDHWC*
strides	
*
paddingVALID*
T0
K
IdentityIdentity,zoo_maxpooling3d_1/max_pooling3d_1/MaxPool3D*
T0"ª